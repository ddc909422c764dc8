/* Bounded fuzzing for make check: random mutations of the seed files in
 * tests/fuzz/seeds/NAME (NAME: the program's name without "fuzz_"), from a
 * fixed seed so a failure repeats, fed to the target one by one.  Speaks
 * TAP.  FUZZ_ITERATIONS overrides the count; a sanitizer report or a crash
 * ends the program, which the test harness shows as a failure. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

#define FUZZ_MAX 65536

struct seed {
	unsigned char *data;
	size_t size;
};

/* In the sanitizers' runtime when the build has one. */
void __sanitizer_set_report_fd(void *fd) __attribute__((weak));

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static size_t below(size_t n)
{
	return n ? (size_t)(rng() % n) : 0;
}

/* Bytes a parser treats specially: digits, signs, quotes, separators. */
static const char interesting[] = "0123456789-+.eEnNaAiIfF'\"(),:{}[] \t\n\r\0x<>|u";

/* One to four mutations of buf[0..*len), which has room for FUZZ_MAX. */
static void mutate(unsigned char *buf, size_t *len, const struct seed *seeds, size_t nseeds)
{
	unsigned rounds = 1 + (unsigned)below(4), r;

	for (r = 0; r < rounds; r++) {
		size_t n = *len, at = below(n + 1), k;
		const struct seed *other;

		switch (below(8)) {
		case 0:		/* flip a bit */
			if (n)
				buf[below(n)] ^= (unsigned char)(1u << below(8));
			break;
		case 1:		/* a random byte */
			if (n)
				buf[below(n)] = (unsigned char)rng();
			break;
		case 2:		/* a byte parsers care about */
			if (n)
				buf[below(n)] = (unsigned char)interesting[below(sizeof interesting - 1)];
			break;
		case 3:		/* insert a few bytes */
			k = 1 + below(8);
			if (n + k > FUZZ_MAX)
				break;
			memmove(buf + at + k, buf + at, n - at);
			*len = n + k;
			while (k--)
				buf[at + k] = (unsigned char)interesting[below(sizeof interesting - 1)];
			break;
		case 4:		/* delete a span */
			k = below(n - at + 1);
			memmove(buf + at, buf + at + k, n - at - k);
			*len = n - k;
			break;
		case 5:		/* cut the end */
			*len = below(n + 1);
			break;
		case 6:		/* repeat a span */
			k = below(n - at + 1);
			if (n + k > FUZZ_MAX)
				break;
			memmove(buf + at + k, buf + at, n - at);
			*len = n + k;
			break;
		default:	/* overwrite with a span of another seed */
			other = &seeds[below(nseeds)];
			k = below(other->size + 1);
			if (at + k > FUZZ_MAX)
				break;
			memcpy(buf + at, other->data, k);
			if (at + k > n)
				*len = at + k;
			break;
		}
	}
}

static int load_seeds(const char *dir, struct seed **out, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct seed *seeds = NULL;
	size_t n = 0;
	char path[4096 + 256 + 2];

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		FILE *f;
		struct seed s;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		s.data = malloc(FUZZ_MAX);
		s.size = s.data ? fread(s.data, 1, FUZZ_MAX, f) : 0;
		fclose(f);
		seeds = realloc(seeds, (n + 1) * sizeof *seeds);
		if (!s.data || !seeds)
			abort();
		seeds[n++] = s;
	}
	closedir(d);
	*out = seeds;
	*count = n;
	return n ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/'), *tests = getenv("TESTS_DIR");
	const char *env = getenv("FUZZ_ITERATIONS");
	unsigned long iterations = env ? strtoul(env, NULL, 10) : fuzz_iterations, i;
	unsigned char *buf = malloc(FUZZ_MAX);
	struct seed *seeds;
	size_t nseeds, j;
	char dir[4096];

	base = base ? base + 1 : argv[0];
	if (!strncmp(base, "lt-", 3))
		base += 3;
	if (!strncmp(base, "fuzz_", 5))
		base += 5;
	snprintf(dir, sizeof dir, "%s/fuzz/seeds/%s", argc > 1 ? argv[1] : tests ? tests : "tests",
		 base);
	if (!buf || load_seeds(dir, &seeds, &nseeds)) {
		printf("Bail out! no seeds in %s\n", dir);
		free(buf);
		return 1;
	}
	/* The targets' one-line messages on bad input are expected: they go
	 * to /dev/null unless FUZZ_VERBOSE is set, and sanitizer reports to
	 * the real standard error.  The run repeats exactly, so a failure is
	 * seen in full again with FUZZ_VERBOSE=1. */
	if (!getenv("FUZZ_VERBOSE")) {
		const int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);

		if (saved < 0 || null < 0 || dup2(null, STDERR_FILENO) < 0)
			abort();
		close(null);
		if (__sanitizer_set_report_fd)
			__sanitizer_set_report_fd((void *)(intptr_t)saved);
	}
	printf("1..1\n");
	for (i = 0; i < iterations; i++) {
		const struct seed *s = &seeds[i % nseeds];
		size_t len = s->size;
		unsigned char *input;

		memcpy(buf, s->data, len);
		if (i >= nseeds)
			mutate(buf, &len, seeds, nseeds);
		/* Exactly len bytes, so a read past the end is a sanitizer report. */
		input = malloc(len ? len : 1);
		if (!input)
			abort();
		memcpy(input, buf, len);
		LLVMFuzzerTestOneInput(input, len);
		free(input);
	}
	printf("ok 1 - %lu inputs from %zu seeds in %s\n", iterations, nseeds, base);
	for (j = 0; j < nseeds; j++)
		free(seeds[j].data);
	free(seeds);
	free(buf);
	return 0;
}
