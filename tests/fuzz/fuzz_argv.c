/* The option parser, through the program: the input split at NUL bytes is
 * the argument list of one clsort run (CLSORT, else ./clsort) with empty
 * standard input, in a scratch directory emptied after each run.  The run
 * must end by itself with status 0, 1 or 2 (a sanitizer's report gives
 * another, or a signal); else
 * the arguments and what it wrote on standard error are printed (as TAP
 * comments) and the target aborts. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

#define MAX_ARGS 32
#define ERR_MAX 16384
#define LIMIT_S 30

static char scratch[] = "/tmp/clsort-fuzz-argv.XXXXXX";

static void empty_scratch(void)
{
	DIR *d = opendir(scratch);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    unlinkat(dirfd(d), e->d_name, 0))
			unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
	closedir(d);
}

static void remove_scratch(void)
{
	empty_scratch();
	rmdir(scratch);
}

static void fail(char **argv, const char *what, const char *err)
{
	const char *p;
	int i;

	printf("# clsort");
	for (i = 1; argv[i]; i++)
		printf(" '%s'", argv[i]);
	printf(": %s\n# ", what);
	for (p = err; *p; p++)
		putchar(*p == '\n' ? (p[1] ? (printf("\n#"), ' ') : '\n') : *p);
	printf("\n");
	fflush(stdout);
	abort();
}

const unsigned long fuzz_iterations = 500;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *prog;
	char *copy = malloc(size + 1), *argv[MAX_ARGS + 2], err[ERR_MAX];
	size_t off = 0, got = 0;
	int argc = 1, pipefd[2], status;
	pid_t pid;
	ssize_t n;
	time_t start;

	if (!prog) {
		prog = getenv("CLSORT");
		if (!prog)
			prog = realpath("clsort", NULL);
		if (!prog || !mkdtemp(scratch))
			abort();
		atexit(remove_scratch);
		signal(SIGPIPE, SIG_IGN);
	}
	if (!copy)
		abort();
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[0] = (char *)prog;
	while (off <= size && argc <= MAX_ARGS) {
		argv[argc++] = copy + off;
		off += strlen(copy + off) + 1;
	}
	argv[argc] = NULL;
	if (pipe(pipefd))
		abort();
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		const int null = open("/dev/null", O_RDWR);
		const char *const asan = getenv("ASAN_OPTIONS");
		char opts[1024];

		if (null < 0 || chdir(scratch) || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
		    dup2(pipefd[1], 2) < 0)
			_exit(127);
		close(pipefd[0]);
		/* The host engine unless the arguments name a device: no device
		 * setup for every run. */
		setenv("CLSORT_DEVICE", "host", 1);
		/* A sanitizer's report ends the run with a status of its own:
		 * AddressSanitizer's 86 (its default, 1, is clsort's "not
		 * sorted"), LeakSanitizer's 23; UndefinedBehaviorSanitizer's
		 * aborts (-fno-sanitize-recover).  The text would not tell:
		 * clsort's messages quote the arguments. */
		if (asan)
			snprintf(opts, sizeof opts, "%s:exitcode=86", asan);
		else
			snprintf(opts, sizeof opts, "exitcode=86");
		setenv("ASAN_OPTIONS", opts, 1);
		execv(prog, argv);
		_exit(127);
	}
	close(pipefd[1]);
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	start = time(NULL);
	for (;;) {
		const pid_t done = waitpid(pid, &status, WNOHANG);

		while ((n = read(pipefd[0], err + got, sizeof err - 1 - got)) > 0)
			got += (size_t)n;
		if (done == pid)
			break;
		if (time(NULL) - start > LIMIT_S) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			err[got] = '\0';
			fail(argv, "did not end", err);
		}
		usleep(1000);
	}
	close(pipefd[0]);
	err[got] = '\0';
	if (!WIFEXITED(status))
		fail(argv, "killed by a signal", err);
	if (WEXITSTATUS(status) > 2)
		fail(argv, WEXITSTATUS(status) == 86 || WEXITSTATUS(status) == 23 ?
			   "sanitizer report" : "exit status above 2", err);
	empty_scratch();
	free(copy);
	return 0;
}
