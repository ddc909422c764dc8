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

void tmp_guard_output(char *path)
{
	pending_output = path;
}

static void on_signal(int sig)
{
	char *p = pending_output, *q = pending_named;
	if (p)
		unlink(p);
	if (q)
		unlink(q);
	signal(sig, SIG_DFL);
	raise(sig);
}

void tmp_install_signals(void)
{
	/* SIGBUS: a store into a mapped -o file that the file system could
	 * not back after all. */
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGBUS };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old;
		/* A signal ignored by our parent stays ignored. */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

int tmp_create(const char *dir)
{
	char *path = tmp_template(dir, "/clsort.");
	sigset_t all, old;
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
	/* A signal while the file still has a name: this thread does not take
	 * it, and whichever thread does removes the file before dying. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pending_named = path;
	fd = mkostemp(path, O_CLOEXEC);
	err = errno;
	if (fd >= 0)
		unlink(path);
	pending_named = NULL;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fd < 0)
		msg_errno(err, "cannot create a temporary file in %s", dir);
	free(path);
	return fd;
}
