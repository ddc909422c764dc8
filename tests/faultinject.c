/* LD_PRELOAD shim that makes chosen reads or writes fail, for the error
 * handling tests.
 *
 *   FAULTINJECT_OP=write|read|fallocate|mmap|close|fsync|tmpfile|none
 *                                 which calls fail (default write):
 *       write, read:  data calls, once the allowance is spent; with write,
 *                     a fallocate asking for more than is left of the
 *                     allowance fails too, as on a full disk
 *       fallocate:    every fallocate, after growing the file to the end of
 *                     the range asked for (unless FALLOC_FL_KEEP_SIZE), as a
 *                     file system that ran out part way may leave it
 *       mmap:         every mapping of a targeted descriptor
 *       close:        every close of a targeted descriptor, which is closed
 *                     all the same, as a late write error reported by close
 *       fsync:        every fsync of a targeted descriptor
 *       tmpfile:      every open with O_TMPFILE, with target tmp, as on a
 *                     file system without unnamed files
 *       none:         nothing (for FAULTINJECT_STOP alone)
 *   FAULTINJECT_ERRNO=ENOSPC|EIO|EPIPE|EAGAIN|EINTR|ENOMEM|EFBIG|EDQUOT|EBADF|
 *                     EACCES|EROFS|EINVAL|EOPNOTSUPP or a number (default EIO)
 *   FAULTINJECT_AFTER=N           bytes let through before failing (default 0);
 *                                 counted over all targeted descriptors
 *   FAULTINJECT_TARGET=stdout|stdin|tmp|PATHPREFIX
 *       stdout, stdin: descriptor 1 or 0
 *       tmp:           descriptors returned by mkstemp/mkostemp/mkstemps/
 *                      mkostemps (but those of PoCL's kernel cache, in a
 *                      directory named pocl), and unnamed files opened
 *                      with O_TMPFILE
 *       PATHPREFIX:    descriptors opened with open/open64/openat/openat64/
 *                      creat/fopen on a path that starts with it
 *
 *   FAULTINJECT_STOP=1            the first write, fallocate or fsync on a
 *                                 targeted descriptor stops the process
 *                                 (SIGSTOP) before it is made, for a test to
 *                                 kill it there
 *   FAULTINJECT_STOP=read         the same at the first read instead
 *   FAULTINJECT_STOP=sized        the same just after the first fallocate
 *                                 that gives a targeted file its size
 *
 * Without FAULTINJECT_TARGET nothing fails.  A call straddling the limit
 * first transfers the bytes that remain, as a short read or write, and the
 * next call fails.
 *
 *   FAULTINJECT_STOP=link         the first linkat(2) that gives a file a
 *                                 name starting with .clsort. stops the
 *                                 process once the name is made
 *
 *   FAULTINJECT_FORK_PAUSE=MS     the parent of a fork(2) pauses MS
 *                                 milliseconds before fork returns to it,
 *                                 as a loaded machine may leave it waiting
 *                                 for a core while the child runs on
 *
 *   FAULTINJECT_CL_MAX_BUFFER=N   OpenCL buffers of more than N bytes fail
 *                                 with CL_MEM_OBJECT_ALLOCATION_FAILURE, as a
 *                                 device with less memory than it claims
 *                                 would; host-visible (ALLOC_HOST_PTR)
 *                                 staging buffers are spared. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_FD 65536

enum target { T_NONE, T_STDOUT, T_STDIN, T_TMP, T_PATH };
enum op { OP_WRITE, OP_READ, OP_FALLOCATE, OP_MMAP, OP_CLOSE, OP_FSYNC, OP_TMPFILE, OP_NONE };

static pthread_once_t resolved = PTHREAD_ONCE_INIT;
static pthread_once_t configured = PTHREAD_ONCE_INIT;
static enum target target;
static const char *prefix;
static enum op fail_op;
static int fail_errno = EIO;
static unsigned long long allowed;
static unsigned long long passed;
static int stop_once;
static int stop_reads;
static int stop_sized;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char marked[MAX_FD];

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_readv)(int, const struct iovec *, int);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pread64)(int, void *, size_t, off64_t);
static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_creat)(const char *, mode_t);
static FILE *(*real_fopen)(const char *, const char *);
static int (*real_mkstemp)(char *);
static int (*real_mkostemp)(char *, int);
static int (*real_mkstemps)(char *, int);
static int (*real_mkostemps)(char *, int, int);
static int (*real_close)(int);
static int (*real_fsync)(int);
static int (*real_fallocate)(int, int, off_t, off_t);
static int (*real_fallocate64)(int, int, off64_t, off64_t);
static int (*real_ftruncate)(int, off_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static void *(*real_mmap64)(void *, size_t, int, int, int, off64_t);
static int (*real_dup)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);

static int parse_errno(const char *s)
{
	static const struct {
		const char *name;
		int code;
	} names[] = {
		{ "ENOSPC", ENOSPC }, { "EIO", EIO }, { "EPIPE", EPIPE }, { "EAGAIN", EAGAIN },
		{ "EINTR", EINTR }, { "ENOMEM", ENOMEM }, { "EFBIG", EFBIG }, { "EDQUOT", EDQUOT },
		{ "EBADF", EBADF }, { "EACCES", EACCES }, { "EROFS", EROFS }, { "EINVAL", EINVAL },
		{ "EOPNOTSUPP", EOPNOTSUPP },
	};
	size_t i;
	char *end;
	long v;

	for (i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(s, names[i].name))
			return names[i].code;
	v = strtol(s, &end, 10);
	if (*s && !*end && v > 0)
		return (int)v;
	fprintf(stderr, "faultinject: unknown FAULTINJECT_ERRNO '%s', using EIO\n", s);
	return EIO;
}

static void *sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void resolve(void)
{
	real_write = sym("write");
	real_read = sym("read");
	real_writev = sym("writev");
	real_readv = sym("readv");
	real_pwrite = sym("pwrite");
	real_pwrite64 = sym("pwrite64");
	real_pread = sym("pread");
	real_pread64 = sym("pread64");
	real_open = sym("open");
	real_open64 = sym("open64");
	real_openat = sym("openat");
	real_openat64 = sym("openat64");
	real_creat = sym("creat");
	real_fopen = sym("fopen");
	real_mkstemp = sym("mkstemp");
	real_mkostemp = sym("mkostemp");
	real_mkstemps = sym("mkstemps");
	real_mkostemps = sym("mkostemps");
	real_close = sym("close");
	real_fsync = sym("fsync");
	real_fallocate = sym("fallocate");
	real_fallocate64 = sym("fallocate64");
	real_ftruncate = sym("ftruncate");
	real_mmap = sym("mmap");
	real_mmap64 = sym("mmap64");
	real_dup = sym("dup");
	real_dup2 = sym("dup2");
	real_dup3 = sym("dup3");
}

static void configure(void)
{
	const char *t = getenv("FAULTINJECT_TARGET");
	const char *op = getenv("FAULTINJECT_OP");
	const char *e = getenv("FAULTINJECT_ERRNO");
	const char *a = getenv("FAULTINJECT_AFTER");

	if (!op || !*op || !strcmp(op, "write"))
		fail_op = OP_WRITE;
	else if (!strcmp(op, "read"))
		fail_op = OP_READ;
	else if (!strcmp(op, "fallocate"))
		fail_op = OP_FALLOCATE;
	else if (!strcmp(op, "mmap"))
		fail_op = OP_MMAP;
	else if (!strcmp(op, "close"))
		fail_op = OP_CLOSE;
	else if (!strcmp(op, "fsync"))
		fail_op = OP_FSYNC;
	else if (!strcmp(op, "tmpfile"))
		fail_op = OP_TMPFILE;
	else if (!strcmp(op, "none"))
		fail_op = OP_NONE;
	else
		fprintf(stderr, "faultinject: unknown FAULTINJECT_OP '%s', using write\n", op);
	if (e && *e)
		fail_errno = parse_errno(e);
	if (a && *a)
		allowed = strtoull(a, NULL, 10);
	stop_reads = getenv("FAULTINJECT_STOP") && !strcmp(getenv("FAULTINJECT_STOP"), "read");
	stop_once = stop_reads || (getenv("FAULTINJECT_STOP") && !strcmp(getenv("FAULTINJECT_STOP"), "1"));
	stop_sized = getenv("FAULTINJECT_STOP") && !strcmp(getenv("FAULTINJECT_STOP"), "sized");
	if (!t || !*t)
		target = T_NONE;
	else if (!strcmp(t, "stdout"))
		target = T_STDOUT;
	else if (!strcmp(t, "stdin"))
		target = T_STDIN;
	else if (!strcmp(t, "tmp"))
		target = T_TMP;
	else {
		target = T_PATH;
		prefix = t;
	}
}

/* The real calls are found at the first call; the settings are read at the
 * first call made once the environment exists.  A sanitizer's runtime makes
 * calls before the C library has set it up, and nothing fails for those. */
static void setup(void)
{
	extern char **environ;

	pthread_once(&resolved, resolve);
	if (environ)
		pthread_once(&configured, configure);
}

static int targeted(int fd)
{
	switch (target) {
	case T_STDOUT:
		return fd == STDOUT_FILENO;
	case T_STDIN:
		return fd == STDIN_FILENO;
	case T_TMP:
	case T_PATH:
		return fd >= 0 && fd < MAX_FD && marked[fd];
	default:
		return 0;
	}
}

static void mark(int fd, int on)
{
	if (fd >= 0 && fd < MAX_FD)
		marked[fd] = (unsigned char)on;
}

static void mark_path(int fd, const char *path)
{
	if (fd >= 0)
		mark(fd, target == T_PATH && path && !strncmp(path, prefix, strlen(prefix)));
}

/* An open with these flags: its descriptor marked as a path's or, unnamed,
 * as a temporary file's; -1 (errno set) when it must fail. */
static int refuse_open(int flags)
{
	if ((flags & O_TMPFILE) != O_TMPFILE || target != T_TMP || fail_op != OP_TMPFILE)
		return 0;
	errno = fail_errno;
	return 1;
}

static int mark_open(int fd, const char *path, int flags)
{
	if (fd >= 0 && (flags & O_TMPFILE) == O_TMPFILE)
		mark(fd, target == T_TMP);
	else
		mark_path(fd, path);
	return fd;
}

/* FAULTINJECT_STOP: stop at the first write, fallocate or fsync (or, with
 * stop_reads, read) on a targeted descriptor. */
/* Stop the process if *flag is set, clearing it: one stop per flag. */
static void stop_once_for(int *flag)
{
	int now;

	pthread_mutex_lock(&lock);
	now = *flag;
	*flag = 0;
	pthread_mutex_unlock(&lock);
	if (now)
		raise(SIGSTOP);
}

static void maybe_stop(int fd, int is_read)
{
	if (is_read == stop_reads && targeted(fd))
		stop_once_for(&stop_once);
}

/* How many of len bytes may go through on fd now: len when the fd is not
 * targeted; otherwise what is left of the allowance (0: fail the call). */
static size_t budget(int fd, size_t len, int is_read)
{
	size_t n;

	if (fail_op != (is_read ? OP_READ : OP_WRITE) || !targeted(fd) || len == 0)
		return len;
	pthread_mutex_lock(&lock);
	n = passed >= allowed ? 0 : allowed - passed < len ? (size_t)(allowed - passed) : len;
	passed += n;
	pthread_mutex_unlock(&lock);
	return n;
}

/* The bytes a call on fd may move (into *n), or -1 with errno set when it
 * must fail. */
static int allow(int fd, size_t len, int is_read, size_t *n)
{
	setup();
	maybe_stop(fd, is_read);
	*n = budget(fd, len, is_read);
	if (*n == 0 && len) {
		errno = fail_errno;
		return -1;
	}
	return 0;
}

/* --- data calls ----------------------------------------------------- */

ssize_t write(int fd, const void *buf, size_t len)
{
	size_t n;
	if (allow(fd, len, 0, &n))
		return -1;
	return real_write(fd, buf, n);
}

ssize_t read(int fd, void *buf, size_t len)
{
	size_t n;
	if (allow(fd, len, 1, &n))
		return -1;
	return real_read(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	size_t n;
	if (allow(fd, len, 0, &n))
		return -1;
	return real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
	size_t n;
	if (allow(fd, len, 0, &n))
		return -1;
	return real_pwrite64(fd, buf, n, off);
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	size_t n;
	if (allow(fd, len, 1, &n))
		return -1;
	return real_pread(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t len, off64_t off)
{
	size_t n;
	if (allow(fd, len, 1, &n))
		return -1;
	return real_pread64(fd, buf, n, off);
}

static size_t iov_total(const struct iovec *iov, int cnt)
{
	size_t t = 0;
	int i;
	for (i = 0; i < cnt; i++)
		t += iov[i].iov_len;
	return t;
}

/* Vector calls on a targeted fd go through the plain calls, one buffer at
 * a time, so that the allowance is counted the same way. */
ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	ssize_t done = 0;
	int i;
	setup();
	if (fail_op != OP_WRITE || !targeted(fd))
		return real_writev(fd, iov, cnt);
	if (iov_total(iov, cnt) == 0)
		return 0;
	for (i = 0; i < cnt; i++) {
		ssize_t w;
		if (iov[i].iov_len == 0)
			continue;
		w = write(fd, iov[i].iov_base, iov[i].iov_len);
		if (w < 0)
			return done ? done : -1;
		done += w;
		if ((size_t)w < iov[i].iov_len)
			break;
	}
	return done;
}

ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	ssize_t done = 0;
	int i;
	setup();
	if (fail_op != OP_READ || !targeted(fd))
		return real_readv(fd, iov, cnt);
	if (iov_total(iov, cnt) == 0)
		return 0;
	for (i = 0; i < cnt; i++) {
		ssize_t r;
		if (iov[i].iov_len == 0)
			continue;
		r = read(fd, iov[i].iov_base, iov[i].iov_len);
		if (r < 0)
			return done ? done : -1;
		done += r;
		if ((size_t)r < iov[i].iov_len)
			break;
	}
	return done;
}

/* --- space and mappings --------------------------------------------- */

/* Whether a fallocate of len bytes on fd must fail (errno set). */
static int refuse_fallocate(int fd, int mode, off64_t off, off64_t len)
{
	int refuse = 0;

	setup();
	if (!targeted(fd) || len <= 0)
		return 0;
	maybe_stop(fd, 0);
	if (fail_op == OP_WRITE) {
		pthread_mutex_lock(&lock);
		refuse = passed >= allowed || (unsigned long long)len > allowed - passed;
		pthread_mutex_unlock(&lock);
	} else if (fail_op == OP_FALLOCATE) {
		struct stat st;
		refuse = 1;
		if (!(mode & FALLOC_FL_KEEP_SIZE) && fstat(fd, &st) == 0 && st.st_size < off + len &&
		    real_ftruncate(fd, off + len))
			perror("faultinject: ftruncate");
	}
	if (refuse)
		errno = fail_errno;
	return refuse;
}

/* FAULTINJECT_STOP=sized: stop once a targeted file has been given its
 * size by fallocate. */
static int stop_if_sized(int fd, int mode, int rc)
{
	if (rc == 0 && !(mode & FALLOC_FL_KEEP_SIZE) && targeted(fd))
		stop_once_for(&stop_sized);
	return rc;
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
	if (refuse_fallocate(fd, mode, off, len))
		return -1;
	return stop_if_sized(fd, mode, real_fallocate(fd, mode, off, len));
}

int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
	if (refuse_fallocate(fd, mode, off, len))
		return -1;
	return stop_if_sized(fd, mode, real_fallocate64(fd, mode, off, len));
}

int fsync(int fd)
{
	setup();
	maybe_stop(fd, 0);
	if (fail_op == OP_FSYNC && targeted(fd)) {
		errno = fail_errno;
		return -1;
	}
	return real_fsync(fd);
}

/* Whether a mapping of fd must fail (errno set). */
static int refuse_mmap(int fd)
{
	setup();
	if (fail_op != OP_MMAP || !targeted(fd))
		return 0;
	errno = fail_errno;
	return 1;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (refuse_mmap(fd))
		return MAP_FAILED;
	return real_mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	if (refuse_mmap(fd))
		return MAP_FAILED;
	return real_mmap64(addr, len, prot, flags, fd, off);
}

/* --- descriptor bookkeeping ------------------------------------------ */

static mode_t mode_arg(int flags, va_list ap)
{
	if (flags & (O_CREAT | O_TMPFILE))
		return (mode_t)va_arg(ap, int);
	return 0;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;
	int fd;
	setup();
	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	if (refuse_open(flags))
		return -1;
	fd = real_open(path, flags, mode);
	return mark_open(fd, path, flags);
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;
	int fd;
	setup();
	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	if (refuse_open(flags))
		return -1;
	fd = real_open64(path, flags, mode);
	return mark_open(fd, path, flags);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;
	int fd;
	setup();
	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	if (refuse_open(flags))
		return -1;
	fd = real_openat(dirfd, path, flags, mode);
	return mark_open(fd, path, flags);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;
	int fd;
	setup();
	va_start(ap, flags);
	mode = mode_arg(flags, ap);
	va_end(ap);
	if (refuse_open(flags))
		return -1;
	fd = real_openat64(dirfd, path, flags, mode);
	return mark_open(fd, path, flags);
}

int creat(const char *path, mode_t mode)
{
	int fd;
	setup();
	fd = real_creat(path, mode);
	mark_path(fd, path);
	return fd;
}

FILE *fopen(const char *path, const char *mode)
{
	FILE *fp;
	setup();
	fp = real_fopen(path, mode);
	if (fp)
		mark_path(fileno(fp), path);
	return fp;
}

/* A temporary file made from template tmpl: the program's, not one of the
 * OpenCL driver's kernel cache (PoCL's, in a directory named pocl). */
static int tmp_fd(int fd, const char *tmpl)
{
	if (fd >= 0)
		mark(fd, target == T_TMP && !strstr(tmpl, "/pocl/"));
	return fd;
}

int mkstemp(char *tmpl)
{
	setup();
	return tmp_fd(real_mkstemp(tmpl), tmpl);
}

int mkostemp(char *tmpl, int flags)
{
	setup();
	return tmp_fd(real_mkostemp(tmpl, flags), tmpl);
}

int mkstemps(char *tmpl, int suffixlen)
{
	setup();
	return tmp_fd(real_mkstemps(tmpl, suffixlen), tmpl);
}

int mkostemps(char *tmpl, int suffixlen, int flags)
{
	setup();
	return tmp_fd(real_mkostemps(tmpl, suffixlen, flags), tmpl);
}

/* glibc's 64-bit aliases, in case a caller is built with them. */
int mkstemp64(char *tmpl) __attribute__((alias("mkstemp")));
int mkostemp64(char *tmpl, int flags) __attribute__((alias("mkostemp")));

int close(int fd)
{
	int fail, rc;

	setup();
	fail = fail_op == OP_CLOSE && targeted(fd);
	mark(fd, 0);
	rc = real_close(fd);
	if (rc == 0 && fail) {
		errno = fail_errno;
		return -1;
	}
	return rc;
}

/* A duplicate of a targeted descriptor is targeted too. */
static int dup_fd(int oldfd, int fd)
{
	if (fd >= 0 && fd != oldfd)
		mark(fd, oldfd >= 0 && oldfd < MAX_FD ? marked[oldfd] : 0);
	return fd;
}

int dup(int oldfd)
{
	setup();
	return dup_fd(oldfd, real_dup(oldfd));
}

int dup2(int oldfd, int newfd)
{
	setup();
	return dup_fd(oldfd, real_dup2(oldfd, newfd));
}

int dup3(int oldfd, int newfd, int flags)
{
	setup();
	return dup_fd(oldfd, real_dup3(oldfd, newfd, flags));
}

/* FAULTINJECT_STOP=link: stop once, after linking a .clsort. name. */
int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags)
{
	static int (*real_linkat)(int, const char *, int, const char *, int);
	static int stopped;
	const char *stop = getenv("FAULTINJECT_STOP");
	const char *base = strrchr(newpath, '/');
	int rc, now;

	if (!real_linkat)
		real_linkat = (int (*)(int, const char *, int, const char *, int))sym("linkat");
	rc = real_linkat(olddirfd, oldpath, newdirfd, newpath, flags);
	pthread_mutex_lock(&lock);
	now = rc == 0 && !stopped && stop && !strcmp(stop, "link") &&
	      !strncmp(base ? base + 1 : newpath, ".clsort.", 8);
	if (now)
		stopped = 1;
	pthread_mutex_unlock(&lock);
	if (now)
		raise(SIGSTOP);
	return rc;
}

/* FAULTINJECT_FORK_PAUSE: the parent pauses after the fork. */
pid_t fork(void)
{
	static pid_t (*real_fork)(void);
	const char *ms = getenv("FAULTINJECT_FORK_PAUSE");
	pid_t pid;

	if (!real_fork)
		real_fork = (pid_t (*)(void))sym("fork");
	pid = real_fork();
	if (pid > 0 && ms && *ms) {
		const long n = strtol(ms, NULL, 10);
		struct timespec t = { n / 1000, n % 1000 * 1000000L };
		while (nanosleep(&t, &t) != 0 && errno == EINTR)
			;
	}
	return pid;
}

/* --- OpenCL ---------------------------------------------------------- */

#include <CL/cl.h>

CL_API_ENTRY cl_mem CL_API_CALL clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size,
					       void *host_ptr, cl_int *errcode_ret)
{
	static cl_mem (*real)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
	const char *max = getenv("FAULTINJECT_CL_MAX_BUFFER");

	if (!real)
		real = (cl_mem (*)(cl_context, cl_mem_flags, size_t, void *, cl_int *))
			sym("clCreateBuffer");
	if (max && !(flags & CL_MEM_ALLOC_HOST_PTR) && size > strtoull(max, NULL, 10)) {
		if (errcode_ret)
			*errcode_ret = CL_MEM_OBJECT_ALLOCATION_FAILURE;
		return NULL;
	}
	return real(context, flags, size, host_ptr, errcode_ret);
}
