#include "config.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clsort.h"
#include "tmpfile.h"
#include "util.h"

/* Symbolic links followed at most (the kernel's own limit). */
#define MAX_HOPS 40
#define COPY_BUF ((size_t)1 << 20)

static char *join(const char *dir, const char *name)
{
	const size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name);
	else
		errno = ENOMEM;
	return p;
}

/* path with its symbolic links followed to where they end, which need not
 * exist yet; *proc set where the way passes through /proc, as /dev/stdout
 * and /dev/fd/N do to name an open descriptor (whose links are not
 * followed further: opening them reaches the descriptor's file).  NULL
 * with errno set. */
static char *resolve(const char *path, bool *proc)
{
	char *cur = strdup(path);
	int hops;

	*proc = false;
	for (hops = 0; cur && hops <= MAX_HOPS; hops++) {
		char *d = strdup(cur), *b = strdup(cur), *dir = NULL, *full = NULL;
		char link[PATH_MAX];
		struct stat st;
		ssize_t n;

		if (d && b)
			dir = realpath(dirname(d), NULL);
		else
			errno = ENOMEM;
		if (dir)
			full = join(dir, basename(b));
		free(d);
		free(b);
		free(cur);
		cur = NULL;
		if (!full) {
			free(dir);
			return NULL;
		}
		if (!strncmp(full, "/proc/", 6))
			*proc = true;
		if (*proc || lstat(full, &st) || !S_ISLNK(st.st_mode)) {
			free(dir);
			return full;
		}
		n = readlink(full, link, sizeof link - 1);
		if (n >= 0) {
			link[n] = '\0';
			cur = link[0] == '/' ? strdup(link) : join(dir, link);
			if (!cur)
				errno = ENOMEM;
		}
		free(dir);
		free(full);
	}
	if (cur) {
		free(cur);
		errno = ELOOP;
	}
	return NULL;
}

/* An unnamed file in dir (O_TMPFILE), which nothing can leave behind; -1
 * where the kernel or the file system has none, or where it could not be
 * given a name at the end (no /proc). */
static int open_unnamed(const char *dir)
{
	char proc[64];
	struct stat st;
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd < 0)
		return -1;
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	if (lstat(proc, &st)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The file that will replace the one st describes gets its owner, group
 * and permissions where this process may give them (a group it is in,
 * any owner as root); a new file gets 0666 less the umask. */
static void keep_identity(int fd, const struct stat *st)
{
	if (!st) {
		const mode_t mask = umask(0);
		umask(mask);
		fchmod(fd, 0666 & ~mask);
		return;
	}
	if (fchown(fd, st->st_uid, st->st_gid))
		(void)!fchown(fd, (uid_t)-1, st->st_gid);
	/* After the owner: changing it clears the set-user-ID bit. */
	fchmod(fd, st->st_mode & 07777);
}

/* The temporary file that dest_open gives for a file written by a copy at
 * the end: in the file's directory, or for a name in /proc in $TMPDIR. */
static int open_copy(struct out_dest *d, const char *path, bool proc)
{
	const char *tmpdir = getenv("TMPDIR");
	int fd;

	d->target = open(d->final_path, O_WRONLY | O_CLOEXEC);
	if (d->target < 0) {
		msg_errno(errno, "cannot open %s for writing", path);
		return -1;
	}
	fd = tmp_create(!proc ? d->dir : tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (fd < 0) {
		close(d->target);
		return -1;
	}
	d->temp = true;
	d->copy = true;
	msg_info(2, "output: writing %s through a temporary file, copied into it at the end", path);
	return fd;
}

int dest_open(struct out_dest *d, const char *path, bool sync)
{
	struct stat st;
	char *dirbuf;
	bool proc, exists;
	int fd;

	memset(d, 0, sizeof *d);
	d->target = -1;
	d->sync = sync;
	d->final_path = resolve(path, &proc);
	if (!d->final_path) {
		msg_errno(errno, "cannot open %s for writing", path);
		return -1;
	}
	exists = stat(d->final_path, &st) == 0;
	/* Devices, pipes and the like are written in place. */
	if (exists && !S_ISREG(st.st_mode)) {
		fd = open(d->final_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (fd < 0)
			goto fail;
		return fd;
	}
	dirbuf = strdup(d->final_path);
	d->dir = dirbuf ? strdup(dirname(dirbuf)) : NULL;
	free(dirbuf);
	if (d->dir)
		d->tmp_path = tmp_template(d->dir, "/.clsort.");
	if (!d->tmp_path) {
		errno = ENOMEM;
		goto fail;
	}
	/* A file with other names, or the one behind a descriptor, keeps its
	 * inode: the others see the result. */
	if (exists && (proc || st.st_nlink > 1)) {
		fd = open_copy(d, path, proc);
		if (fd < 0)
			goto out;
		return fd;
	}
	d->temp = true;
	fd = open_unnamed(d->dir);
	d->unnamed = fd >= 0;
	if (fd < 0) {
		tmp_hold_signals();
		fd = mkostemp(d->tmp_path, O_CLOEXEC);
		if (fd >= 0)
			tmp_guard_output(d->tmp_path);
		tmp_release_signals();
		if (fd < 0)
			goto fail;
	}
	keep_identity(fd, exists ? &st : NULL);
	msg_info(2, "output: writing %s through %s", path,
		 d->unnamed ? "an unnamed temporary file" : d->tmp_path);
	return fd;
fail:
	msg_errno(errno, "cannot open %s for writing", path);
out:
	free(d->tmp_path);
	free(d->dir);
	free(d->final_path);
	memset(d, 0, sizeof *d);
	d->target = -1;
	return -1;
}

static int fail_write(const char *name)
{
	if (errno == EPIPE)
		return CLS_E_PIPE;
	msg_errno(errno, "write error on %s", name);
	return CLS_E_FAIL;
}

/* Sync the directory dir, so that a name given in it lasts. */
static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	if (rc) {
		const int err = errno;
		close(fd);
		errno = err;
		return rc;
	}
	return close(fd);
}

/* Give the unnamed file fd the name d->final_path: linked there when no
 * such file exists, else linked under a temporary name that is renamed
 * over it.  -1 with errno set. */
static int name_unnamed(struct out_dest *d, int fd)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char proc[64];
	char *const x = d->tmp_path + strlen(d->tmp_path) - 6;
	unsigned tries;
	int rc = -1;

	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, d->final_path, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	/* The file has a name only between the link and the rename: a signal
	 * in between removes it (from a thread started before the signals
	 * were blocked), or waits for the rename (tmp_install_signals). */
	tmp_guard_output(d->tmp_path);
	for (tries = 0; tries < 100; tries++) {
		uint64_t r = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^
			     (uint64_t)(now_sec() * 1e9) ^ ((uint64_t)tries << 40);
		int i;
		for (i = 0; i < 6; i++, r /= sizeof chars - 1)
			x[i] = chars[r % (sizeof chars - 1)];
		rc = linkat(AT_FDCWD, proc, AT_FDCWD, d->tmp_path, AT_SYMLINK_FOLLOW);
		if (rc == 0 || errno != EEXIST)
			break;
	}
	if (rc == 0 && rename(d->tmp_path, d->final_path)) {
		const int err = errno;
		unlink(d->tmp_path);
		errno = err;
		rc = -1;
	}
	return rc;
}

/* Replace the content of d->target with the whole of fd.  0, or -1 with
 * errno set. */
static int copy_into(struct out_dest *d, int fd)
{
	struct stat st;
	unsigned char *buf = NULL;
	off_t at = 0;
	int rc = -1;

	if (fstat(fd, &st) || ftruncate(d->target, 0) || lseek(d->target, 0, SEEK_SET) < 0)
		return -1;
	while (at < st.st_size) {
		ssize_t n = copy_file_range(fd, &at, d->target, NULL, (size_t)(st.st_size - at), 0);
		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || (errno != EXDEV && errno != EINVAL && errno != ENOSYS &&
			       errno != EOPNOTSUPP && errno != EBADF))
			break;
		/* Where the kernel cannot copy between these files. */
		buf = malloc(COPY_BUF);
		if (!buf) {
			errno = ENOMEM;
			return -1;
		}
		while (at < st.st_size) {
			const size_t want = st.st_size - at < (off_t)COPY_BUF ? (size_t)(st.st_size - at)
									   : COPY_BUF;
			ssize_t got = pread(fd, buf, want, at);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				if (got == 0)
					errno = EIO;
				break;
			}
			if (write_full(d->target, buf, (size_t)got))
				break;
			at += got;
		}
		break;
	}
	free(buf);
	if (at == st.st_size)
		rc = 0;
	else if (errno == 0)
		errno = EIO;
	return rc;
}

static void release(struct out_dest *d)
{
	free(d->tmp_path);
	free(d->dir);
	free(d->final_path);
	memset(d, 0, sizeof *d);
	d->target = -1;
}

int dest_place(struct out_dest *d, int fd, const char *name)
{
	const double t0 = now_sec();
	int rc = 0;

	if (!d->temp) {
		/* A device written in place: close reports late errors. */
		if (close(fd))
			rc = fail_write(name);
		release(d);
		return rc;
	}
	if (d->copy) {
		errno = 0;
		if (copy_into(d, fd))
			rc = fail_write(name);
		else if (d->sync && fsync(d->target)) {
			msg_errno(errno, "cannot sync %s", name);
			rc = CLS_E_FAIL;
		}
		close(fd);
		if (close(d->target) && rc == 0)
			rc = fail_write(name);
		d->target = -1;
		release(d);
		return rc;
	}
	if (d->sync && fsync(fd)) {
		msg_errno(errno, "cannot sync %s", name);
		dest_drop(d, fd);
		return CLS_E_FAIL;
	}
	/* close reports late write errors (NFS flushes at every close), which
	 * must come before the name is given: an unnamed file is named through
	 * its descriptor, so a duplicate of it is closed. */
	if (d->unnamed) {
		const int c = dup(fd);
		if (c < 0 || close(c)) {
			rc = fail_write(name);
			dest_drop(d, fd);
			return rc;
		}
	} else if (close(fd)) {
		rc = fail_write(name);
		dest_drop(d, -1);
		return rc;
	}
	tmp_hold_signals();
	if (d->unnamed ? name_unnamed(d, fd) : rename(d->tmp_path, d->final_path)) {
		const int err = errno;
		dest_drop(d, d->unnamed ? fd : -1);
		tmp_release_signals();
		msg_errno(err, "cannot rename the output into %s", name);
		return CLS_E_FAIL;
	}
	tmp_guard_output(NULL);
	tmp_release_signals();
	if (d->unnamed)
		/* Flushed by the close above: nothing is left to fail. */
		close(fd);
	if (d->sync && sync_dir(d->dir)) {
		msg_errno(errno, "cannot sync the directory of %s", name);
		rc = CLS_E_FAIL;
	} else if (d->sync) {
		msg_info(1, "output: %s synced to its device in %.3f s", name,
			 now_sec() - t0);
	}
	release(d);
	return rc;
}

void dest_drop(struct out_dest *d, int fd)
{
	if (fd >= 0)
		close(fd);
	if (d->target >= 0)
		close(d->target);
	if (d->temp && !d->unnamed && !d->copy)
		unlink(d->tmp_path);
	tmp_guard_output(NULL);
	release(d);
}
