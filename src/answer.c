#include "config.h"
#include "answer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device.h"
#include "engine.h"
#include "util.h"

/* In the worker: the pipe's end its answer goes to; -1 elsewhere. */
static int answer_fd = -1;
/* In the caller's process: the worker. */
static pid_t worker;

/* The signals the caller's process passes on.  SIGTSTP stops the worker,
 * whose stop stops this process in turn; SIGCONT goes on to it. */
static const int passed[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
			      SIGTSTP, SIGCONT };

/* Whether o is a sort (not -c or -m) on a device spec that may name a
 * GPU; with any, where early. */
static bool answers_early(const struct cls_opts *o, bool early)
{
	struct dev_spec spec;

	if (o->check != CLS_CHECK_NONE || o->merge)
		return false;
	if (early)
		return true;
	/* A spec that names nothing is the worker's to report. */
	return !eng_is_host(o->device) &&
	       (dev_parse_spec(o->device, &spec) != 0 || spec.kind != DEV_CPU);
}

static void pass_on(int sig)
{
	const int saved = errno;

	kill(worker, sig);
	errno = saved;
}

static void noted(int sig)
{
	(void)sig;
}

/* End as the worker ended (status st of waitpid): its exit status, or its
 * signal, without a core of this process. */
static _Noreturn void end_as(int st)
{
	const struct rlimit none = { 0, 0 };
	sigset_t one;
	int sig;

	if (WIFEXITED(st))
		_exit(WEXITSTATUS(st));
	sig = WTERMSIG(st);
	setrlimit(RLIMIT_CORE, &none);
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* Whether the worker has ended (its status in *st); where it has
 * stopped, stop too: SIGCONT, when it comes, goes on to it. */
static bool worker_ended(int flags, int *st)
{
	pid_t r;

	while ((r = waitpid(worker, st, flags | WUNTRACED)) < 0 && errno == EINTR)
		;
	if (r < 0) {
		/* Not ours to wait for any more: say what can be said. */
		*st = CLS_EXIT_ERROR << 8;
		return true;
	}
	if (r == worker && WIFSTOPPED(*st)) {
		raise(SIGSTOP);
		return false;
	}
	return r == worker;
}

/* The caller's process: wait for the worker's answer on fd, or its end. */
static _Noreturn void wait_worker(int fd)
{
	struct sigaction sa;
	sigset_t during;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	const int null = open("/dev/null", O_RDWR);
	unsigned char status;
	bool ended = false;
	int st = 0;
	size_t i;

	/* None of the caller's streams held here: a reader of the output
	 * sees its end when the worker closes it, a writer of the input
	 * sees its reader go when the worker does. */
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = pass_on;
	for (i = 0; i < sizeof passed / sizeof passed[0]; i++) {
		struct sigaction old;
		/* Ignored here, ignored by the worker too: it inherited that. */
		if (sigaction(passed[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(passed[i], &sa, NULL);
	}
	/* SIGCHLD (blocked since before the fork) only while waiting in
	 * ppoll, so that a stop between two looks is not missed. */
	sa.sa_handler = noted;
	sigaction(SIGCHLD, &sa, NULL);
	sigprocmask(SIG_BLOCK, NULL, &during);
	sigdelset(&during, SIGCHLD);
	for (;;) {
		const int r = ppoll(&p, 1, NULL, &during);
		ssize_t n;

		if (r < 0) {
			if (errno != EINTR)
				break;
			if (!ended && worker_ended(WNOHANG, &st))
				ended = true;	/* its answer, if any, is in the pipe */
			continue;
		}
		while ((n = read(fd, &status, 1)) < 0 && errno == EINTR)
			;
		if (n == 1)
			_exit(status);
		break;
	}
	while (!ended)
		ended = worker_ended(0, &st);
	end_as(st);
}

/* fd moved above the standard streams, which the caller may have left
 * closed (where the pipe's ends would otherwise land); -1 on failure. */
static int above_stdio(int fd)
{
	int high;

	if (fd > STDERR_FILENO)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	close(fd);
	return high;
}

void answer_start(const struct cls_opts *o)
{
	const char *how = getenv("CLSORT_ANSWER");
	const pid_t caller = getpid();
	sigset_t child, mask;
	int fds[2];
	pid_t pid;

	if ((how && !strcmp(how, "late")) || !answers_early(o, how && !strcmp(how, "early")))
		return;
	if (pipe2(fds, O_CLOEXEC) != 0)
		return;
	fds[0] = above_stdio(fds[0]);
	fds[1] = above_stdio(fds[1]);
	if (fds[0] < 0 || fds[1] < 0) {
		if (fds[0] >= 0)
			close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
		return;
	}
	/* Where the caller left SIGCHLD ignored, an ended worker would be
	 * reaped before its status could be taken.  Blocked from before the
	 * fork until wait_worker waits for it: a SIGCHLD that came at its
	 * default action would be dropped, and a worker that stopped before
	 * this process had set its handler would leave it waiting, running,
	 * for an answer that never comes. */
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&child);
	sigaddset(&child, SIGCHLD);
	sigprocmask(SIG_BLOCK, &child, &mask);
	fflush(NULL);
	pid = fork();
	if (pid <= 0)
		sigprocmask(SIG_SETMASK, &mask, NULL);
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		answer_fd = fds[1];
		/* The caller's process killed outright: the worker too. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != caller)
			raise(SIGKILL);
		return;
	}
	close(fds[1]);
	worker = pid;
	wait_worker(fds[0]);
}

bool answer_awaited(void)
{
	return answer_fd >= 0;
}

int answer_now(void)
{
	const unsigned char ok = CLS_EXIT_OK;
	int null, out;

	if (answer_fd < 0)
		return 0;
	/* Standard output closed as the exit would close it, its late
	 * errors (ENOSPC, EIO) ours to report before the answer. */
	if (fflush(stdout) != 0) {
		msg_errno(errno, "write error");
		return CLS_E_FAIL;
	}
	null = open("/dev/null", O_RDWR);
	if (null < 0) {
		/* No way to let go of the streams: answer at the exit. */
		close(answer_fd);
		answer_fd = -1;
		return 0;
	}
	/* -1 where the caller left standard output closed. */
	out = dup(STDOUT_FILENO);
	dup2(null, STDOUT_FILENO);
	if (out >= 0 && close(out) != 0 && errno != EINTR) {
		msg_errno(errno, "write error");
		if (null > STDERR_FILENO)
			close(null);
		return CLS_E_FAIL;
	}
	dup2(null, STDIN_FILENO);
	dup2(null, STDERR_FILENO);
	if (null > STDERR_FILENO)
		close(null);
	/* The caller's process ends now: not this one with it. */
	prctl(PR_SET_PDEATHSIG, 0);
	if (write(answer_fd, &ok, 1) != 1) {
		/* It is gone already (killed): nobody left to tell. */
	}
	close(answer_fd);
	answer_fd = -1;
	return 0;
}
