/* kernel_warm.c - see kernel_warm.h. */
#include "autoconf.h"

#include <string.h>
#include <strings.h>

#include "buf.h"
#include "codemode_warm.h"
#include "config.h"
#include "kernelspec.h"
#include "kernel_warm.h"
#include "pylit.h"

/*
 * Keeps a long session from growing without bound: IPython holds every
 * input four times (In, _iN, the raw input list, and, with the history in
 * memory, a cache no thread ever writes out); after each cell, the one
 * KEEP cells back goes from all of them (In keeps its numbering: the
 * entry is emptied), and the in-memory database keeps the last KEEP. Out is culled by
 * IPython itself at its cache_size, with a warning in the agent's stderr
 * that says nothing the agent can act on; it is silenced. Run through
 * exec in a namespace of its own, so the session's finds nothing of it.
 */
static const char bound_history[] =
	"exec('''\n"
	"import warnings\n"
	"warnings.filterwarnings('ignore', message='Output cache limit')\n"
	"KEEP = 1000\n"
	"def trim(result, ip=ip):\n"
	"    n = ip.execution_count - 1 - KEEP\n"
	"    if n < 1:\n"
	"        return\n"
	"    ip.user_ns.pop('_i%d' % n, None)\n"
	"    ih = ip.user_ns.get('_ih')\n"
	"    if ih is not None and n < len(ih):\n"
	"        ih[n] = ''\n"
	"    hm = ip.history_manager\n"
	"    if hm is None or not hm.enabled:\n"
	"        return\n"
	"    if n < len(hm.input_hist_raw):\n"
	"        hm.input_hist_raw[n] = ''\n"
	"    if str(hm.hist_file) == ':memory:':\n" /* no thread ever writes its cache out */
	"        hm.writeout_cache()\n"
	"        hm.db.execute('DELETE FROM history WHERE session = ? AND line <= ?',\n"
	"                      (hm.session_number, n))\n"
	"ip.events.register('post_run_cell', trim)\n"
	"''', {'ip': get_ipython()})\n";

/*
 * A warm call's reply, sooner, and fd-level output in its own call.
 * After each cell ipykernel 6 flushes stdout and stderr by handing a flush
 * to its IOPub thread and waiting for it, twice, even with nothing
 * written, then sleeps 0.5 ms ("the flush doesn't seem to make it"):
 * about 3 of a warm `1+1`'s 9 ms here (bench/README.md). The worker waits
 * for iopub's idle, which that thread sends after any output queued
 * before it, so a flush with nothing pending may return at once. Nothing
 * pending means no write since the last flush began and no flush still
 * at work on that thread: a timed flush (0.2 s after a print) that is
 * still encoding a large output has not queued it yet, and the idle queued
 * before it would go first (a lost message, seen by bench/memory.py).
 * What that thread cannot see is output written to descriptor 1 or 2
 * (subprocesses, C code, os.write): ipykernel reads it from a pipe in a
 * thread of its own, which may still hold a chunk it read when the cell
 * ends; that chunk then lands in the next call (3 calls in 80 did with the
 * stock flush). Here that reader is replaced by one that reads only under a
 * lock, and a flush first takes, under the same lock, whatever the pipe
 * holds: all a cell wrote to its descriptors is in its own result.
 * A child forked by Python (os.fork, multiprocessing) prints through
 * IOPub's own pipe, which no flush can wait for: after a fork the flush
 * is the stock one, wait and sleep included, for what that is worth. Only
 * for the ipykernel 6 whose OutStream this knows.
 */
static const char quick_output[] =
	"exec('''\n"
	"import array, codecs, fcntl, os, select, sys, termios, threading, time\n"
	"import ipykernel\n"
	"from ipykernel.iostream import OutStream\n"
	"def take(s):\n" /* under s._codeexecd_lock */
	"    n = array.array('i', [0])\n"
	"    fcntl.ioctl(s._fid, termios.FIONREAD, n)\n"
	"    if n[0]:\n"
	"        s.write(s._codeexecd_dec.decode(os.read(s._fid, n[0])))\n"
	"    return n[0]\n"
	"def watch(s):\n"
	"    p = select.poll()\n"
	"    p.register(s._fid, select.POLLIN)\n"
	"    while True:\n"
	"        p.poll()\n"
	"        with s._codeexecd_lock:\n"
	"            n = take(s)\n"
	"        if not n:\n" /* a flush took it first, or end of file */
	"            time.sleep(0.01)\n"
	"def replace_reader(fd, s):\n"
	"    if not isinstance(s, OutStream) or not getattr(s, '_should_watch', False):\n"
	"        return\n"
	"    old = s.watch_fd_thread\n"
	"    s._should_watch = False\n"
	"    os.write(fd, b'\\\\0')\n" /* wakes the stock reader, which drops it and ends */
	"    old.join(1)\n"
	"    if old.is_alive():\n"
	"        s._should_watch = True\n"
	"        return\n"
	"    s._codeexecd_lock = threading.Lock()\n"
	"    s._codeexecd_dec = codecs.getincrementaldecoder('utf-8')('replace')\n"
	"    threading.Thread(target=watch, args=(s,), name='codeexecd-' + s.name, daemon=True).start()\n"
	"def tracked(self, inner=OutStream._flush):\n" /* on IOPub's thread */
	"    self._codeexecd_busy = getattr(self, '_codeexecd_busy', 0) + 1\n"
	"    try:\n"
	"        inner(self)\n"
	"    finally:\n"
	"        self._codeexecd_busy -= 1\n"
	"forks = [0]\n"
	"def forked():\n"
	"    forks[0] += 1\n"
	"def flush(self, full=OutStream.flush):\n"
	"    if not self._is_master_process():\n"
	"        return full(self)\n"
	"    lock = getattr(self, '_codeexecd_lock', None)\n"
	"    if lock is not None:\n"
	"        with lock:\n"
	"            take(self)\n"
	"    if getattr(self, '_codeexecd_forks', 0) != forks[0]:\n"
	"        self._codeexecd_forks = forks[0]\n"
	"        full(self)\n"
	"        time.sleep(0.0005)\n"
	"    elif self._flush_pending or self._buffer.tell() or getattr(self, '_codeexecd_busy', 0):\n"
	"        full(self)\n"
	"if ipykernel.version_info[0] == 6 and all(hasattr(OutStream, a) for a in\n"
	"        ('_is_master_process', '_flush_buffer', '_schedule_flush')):\n"
	"    ip.kernel._execute_sleep = 0\n"
	"    replace_reader(1, sys.stdout)\n"
	"    replace_reader(2, sys.stderr)\n"
	"    OutStream._flush = tracked\n"
	"    os.register_at_fork(after_in_parent=forked)\n"
	"    OutStream.flush = flush\n"
	"''', {'ip': get_ipython()})\n";

/*
 * Another kernel's warm-up: code_prefix, in the kernel's own language
 * (config.c refused tools_dir and pool.preload for it), then a displayed
 * value where its language has one that binds no name of the session's:
 * IRkernel's first displayed result costs about 0.7 s (bench/README.md).
 * Octave's `1` would set ans, so Octave has none. NULL: no warm-up.
 */
static char *
other_warm_code(const struct config *cfg)
{
	static const struct {
		const char *language;
		const char *code;
	} shown[] = {
		{"R", "1"},
	};
	const char *tail = NULL;
	struct buf b;

	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
		if (strcasecmp(cfg->kernel_language, shown[i].language) == 0)
			tail = shown[i].code;
	if (cfg->code_prefix[0] == '\0' && tail == NULL)
		return NULL;
	buf_init(&b);
	buf_adds(&b, cfg->code_prefix);
	if (tail)
		buf_printf(&b, "%s%s\n", cfg->code_prefix[0] ? "\n" : "", tail);
	return buf_release(&b);
}

char *
kernel_warm_code(const struct config *cfg)
{
	struct buf b;

	if (!kernelspec_is_ipykernel(cfg))
		return other_warm_code(cfg);
	buf_init(&b);
	buf_adds(&b, bound_history);
	buf_adds(&b, quick_output);
	/*
	 * tools_dir's Python files: appended to sys.path here rather than
	 * through PYTHONPATH, since a seccomp kernel starts with -I and reads
	 * no PYTHONPATH. Appended, so that it shadows no installed module.
	 */
	if (cfg->tools_dir[0] != '\0') {
		buf_adds(&b, "__import__('sys').path.append(");
		pylit_str(&b, cfg->tools_dir, strlen(cfg->tools_dir));
		buf_adds(&b, ")\n");
	}
	if (cfg->upstreams.n > 0)
		codemode_warm_code(&b);
	/* Names are checked by config.c: nothing but identifiers and dots. */
	for (size_t i = 0; i < cfg->pool_preload.n; i++)
		buf_printf(&b, "import %s\n", cfg->pool_preload.v[i]);
	/*
	 * code_prefix: in this execution of its own, not before every one of
	 * the agent's, so that line numbers in the agent's tracebacks stay
	 * its own. Compiled as <code_prefix>: its own errors name it.
	 */
	if (cfg->code_prefix[0] != '\0') {
		buf_adds(&b, "exec(compile(");
		pylit_str(&b, cfg->code_prefix, strlen(cfg->code_prefix));
		buf_adds(&b, ", '<code_prefix>', 'exec'), get_ipython().user_ns)\n");
	}
	/*
	 * IPython's own output cache: displayed like any value, but the one
	 * value its display hook stores nowhere (no _, _1 or Out entry).
	 */
	buf_printf(&b, "_oh\n");
	return buf_release(&b);
}
