#include "config.h"
#include "tmpfile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* The -o temporary file, and a temporary file between its creation and
 * its unlinking, for the signal handler to remove. */
static char *volatile pending_output;
static char *volatile pending_named;
/* Where standard output, sized ahead, is to be cut back to; -1: not. */
static volatile long long stdout_cut = -1;
/* Held while a guarded name is made and given up: the signal thread takes
 * it before removing anything. */
static pthread_mutex_t naming = PTHREAD_MUTEX_INITIALIZER;
static sigset_t taken;
static pthread_once_t installed = PTHREAD_ONCE_INIT;
/* A signal was taken (or is waiting to be): the process is about to end. */
static volatile sig_atomic_t dying;

void tmp_guard_output(char *path)
{
	pending_output = path;
}

void tmp_guard_stdout(long long at)
{
	stdout_cut = at;
}

void tmp_hold_signals(void)
{
	pthread_mutex_lock(&naming);
}

void tmp_release_signals(void)
{
	sigset_t pending;
	int i;

	pthread_mutex_unlock(&naming);
	/* A signal that came meanwhile ends the process as soon as the
	 * signal thread has the lock: this thread must not go on to exit with
	 * a status of its own first. */
	if (!dying && sigpending(&pending) == 0)
		for (i = 1; i < NSIG && !dying; i++)
			if (sigismember(&taken, i) == 1 && sigismember(&pending, i) == 1)
				dying = 1;
	while (dying)
		pause();
}

int tmp_fallocate(int fd, off_t off, off_t len)
{
	int rc;

	tmp_hold_signals();
	rc = fallocate(fd, 0, off, len);
	tmp_release_signals();
	return rc;
}

static void remove_pending(void)
{
	char *p = pending_output, *q = pending_named;
	const long long cut = stdout_cut;
	if (p)
		unlink(p);
	if (q)
		unlink(q);
	if (cut >= 0 && ftruncate(STDOUT_FILENO, (off_t)cut) != 0)
		return;	/* dying all the same */
}

void tmp_remove_guarded(void)
{
	pthread_mutex_lock(&naming);
	remove_pending();
	pthread_mutex_unlock(&naming);
}

/* For SIGBUS, which the faulting thread takes, and for threads that were
 * running before the signals were blocked (a library's). */
static void on_signal(int sig)
{
	/* SIGBUS from a store into standard output's mapping after the
	 * signal thread cut the file back: the process is dying of that
	 * thread's signal, which must decide its status. */
	if (sig == SIGBUS && dying)
		for (;;)
			pause();
	remove_pending();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Every other thread has the signals blocked: this one takes them, waits
 * for a name being made to be settled, and dies of the signal. */
static void *signal_main(void *arg)
{
	sigset_t one;
	int sig;

	(void)arg;
	while (sigwait(&taken, &sig))
		;
	dying = 1;
	pthread_mutex_lock(&naming);
	remove_pending();
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	raise(sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	return NULL;
}

static void install(void)
{
	/* SIGBUS: a store into a mapped -o file that the file system could
	 * not back after all. */
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGBUS };
	struct sigaction sa;
	pthread_attr_t attr;
	pthread_t t;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&taken);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old;
		/* A signal ignored by our parent stays ignored. */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
		if (sigs[i] != SIGBUS)
			sigaddset(&taken, sigs[i]);
	}
	pthread_sigmask(SIG_BLOCK, &taken, NULL);
	if (pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, signal_main, NULL) == 0) {
			pthread_attr_destroy(&attr);
			return;
		}
		pthread_attr_destroy(&attr);
	}
	/* No thread for them: the handler takes them where they land. */
	pthread_sigmask(SIG_UNBLOCK, &taken, NULL);
}

void tmp_install_signals(void)
{
	pthread_once(&installed, install);
}

int tmp_create(const char *dir)
{
	char *path = tmp_template(dir, "/clsort.");
	int fd, err;

	if (!path) {
		msg_errno(ENOMEM, "cannot create a temporary file in %s", dir);
		return -1;
	}
	/* Unnamed where the file system allows: not even SIGKILL leaves it. */
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0) {
		free(path);
		return fd;
	}
	/* A signal while the file still has a name removes it before the
	 * process dies. */
	tmp_hold_signals();
	pending_named = path;
	fd = mkostemp(path, O_CLOEXEC);
	err = errno;
	if (fd >= 0)
		unlink(path);
	pending_named = NULL;
	tmp_release_signals();
	if (fd < 0)
		msg_errno(err, "cannot create a temporary file in %s", dir);
	free(path);
	return fd;
}
