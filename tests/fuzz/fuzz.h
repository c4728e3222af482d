/*
 * fuzz.h - the entry point every harness defines (libFuzzer's).
 *
 * Built with --enable-fuzzers (clang, -fsanitize=fuzzer) a harness is a
 * fuzzer; otherwise it links fuzz_main.c and replays the files it is given,
 * which is how `make check` runs each harness over its seed corpus.
 */
#ifndef TESTS_FUZZ_H
#define TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
