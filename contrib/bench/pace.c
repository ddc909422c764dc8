/* pace: write FILE to standard output at RATE bytes a second, in pieces
 * of 1 MiB, as a slow producer (decompression, the network) would.
 *
 *   pace RATE FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	const double rate = argc == 3 ? strtod(argv[1], NULL) : 0;
	const int fd = argc == 3 ? open(argv[2], O_RDONLY) : -1;
	const double t0 = now();
	unsigned long long sent = 0;
	ssize_t got;

	if (rate <= 0 || fd < 0) {
		fprintf(stderr, "usage: pace RATE FILE (bytes a second)\n");
		return 2;
	}
	while ((got = read(fd, buf, sizeof buf)) > 0) {
		ssize_t at = 0;
		double wait;
		while (at < got) {
			const ssize_t n = write(STDOUT_FILENO, buf + at, (size_t)(got - at));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				perror("pace: write");
				return 1;
			}
			at += n;
		}
		sent += (unsigned long long)got;
		wait = t0 + (double)sent / rate - now();
		if (wait > 0) {
			struct timespec ts = { (time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9) };
			nanosleep(&ts, NULL);
		}
	}
	return got < 0;
}
