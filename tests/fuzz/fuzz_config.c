/* fuzz_config.c - the YAML configuration loader on arbitrary files. */
#define _GNU_SOURCE
#include "autoconf.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c;
	char path[64], err[1024];

	/* config_load reads a path: give it an anonymous in-memory file. */
	int fd = memfd_create("fuzz-config", MFD_CLOEXEC);
	if (fd == -1)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (config_load(path, &c, err, sizeof(err)) == 0)
			config_free(&c);
	}
	close(fd);
	return 0;
}
