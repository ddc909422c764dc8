/* scalecheck: generate large inputs for the scale benchmark, and check a
 * sort's output without sorting again.
 *
 *   scalecheck gen FORMAT COUNT SEED FILE   write COUNT random records
 *   scalecheck sum FORMAT FILE              print the multiset checksum
 *   scalecheck check FORMAT IN OUT          OUT sorted, same multiset as IN
 *
 * FORMAT is u32 or u64 (bare little-endian keys), rec16 (16-byte records,
 * a u64 key at offset 0, the record's number in the payload), kv (lines
 * "KEY:VALUE" with a decimal u32 key and a 10-byte value) or kvlog (kv
 * lines shaped as a service's log keyed by the second of each event: keys
 * nearly in order, 64 lines a second, one in ten up to five minutes late,
 * and a request's text of 40 to 300 bytes as the value).  The checksum is
 * the count of records and the sum of a 64-bit hash of each record's bytes:
 * the same for any order of the same records.  Sortedness is checked on the
 * key alone, ascending.  All of it runs on every online CPU.  Exit 0 when
 * the check passes, 1 when it fails, 2 on errors. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum fmt { U32, U64, REC16, KV, KVLOG };

static enum fmt parse_fmt(const char *s)
{
	if (!strcmp(s, "u32"))
		return U32;
	if (!strcmp(s, "u64"))
		return U64;
	if (!strcmp(s, "rec16"))
		return REC16;
	if (!strcmp(s, "kv"))
		return KV;
	if (!strcmp(s, "kvlog"))
		return KVLOG;
	fprintf(stderr, "scalecheck: unknown format %s\n", s);
	exit(2);
}

static size_t rec_size(enum fmt f)
{
	return f == U32 ? 4 : f == U64 ? 8 : f == REC16 ? 16 : 0;
}

static uint64_t mix(uint64_t x)
{
	/* splitmix64's finalizer */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t hash_bytes(const unsigned char *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		h = mix(h ^ v);
		p += 8;
		n -= 8;
	}
	if (n) {
		uint64_t v = 0;
		memcpy(&v, p, n);
		h = mix(h ^ v ^ 0xff00000000000000ull);
	}
	return mix(h);
}

static unsigned nthreads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 256 ? 256 : (unsigned)n;
}

/* --- gen ---------------------------------------------------------------- */

struct gen_job {
	enum fmt f;
	unsigned char *dst;
	uint64_t first, count, seed;
	size_t bytes;		/* kv: bytes written */
};

static uint64_t rnd(uint64_t i, uint64_t seed)
{
	return mix(i * 0x9e3779b97f4a7c15ull + seed);
}

/* kv lines take 11 to 21 bytes: at most this many. */
#define KV_MAX 22

static size_t kv_line(unsigned char *p, uint64_t i, uint64_t seed)
{
	const uint64_t r = rnd(i, seed);
	int len = sprintf((char *)p, "%" PRIu32 ":", (uint32_t)r);
	uint64_t v = r >> 32;
	int j;
	for (j = 0; j < 10; j++, v = v * 6364136223846793005ull + 1442695040888963407ull)
		p[len++] = (unsigned char)('a' + (v >> 59) % 26);
	p[len++] = '\n';
	return (size_t)len;
}

/* kvlog lines take at most this many bytes. */
#define KVLOG_MAX 320

static size_t kvlog_line(unsigned char *p, uint64_t i, uint64_t seed)
{
	static const char *const verbs[] = { "GET", "GET", "GET", "POST", "PUT", "DELETE" };
	static const char *const paths[] = { "/api/v2/orders/", "/api/v2/users/",
					     "/static/img/products/", "/api/v2/search?q=" };
	static const int status[] = { 200, 200, 200, 200, 304, 404, 500 };
	const uint64_t r = rnd(i, seed), q = mix(r);
	uint32_t key = 1700000000u + (uint32_t)(i >> 6);
	int len, want, k;
	uint64_t v = q;

	if (r % 10 == 0)
		key -= (uint32_t)(r >> 40) % 300;
	len = sprintf((char *)p, "%" PRIu32 ":host%02u %s %s%" PRIu64 " status=%d bytes=%u ", key,
		      (unsigned)(r >> 8) % 32, verbs[(r >> 16) % 6], paths[(r >> 20) % 4],
		      (r >> 24) % 1000000, status[(r >> 44) % 7], (unsigned)(q % 100000));
	want = 40 + (int)((q >> 20) % 261);
	for (k = len; k < want; k++, v = v * 6364136223846793005ull + 1442695040888963407ull)
		p[len++] = (unsigned char)('a' + (v >> 59) % 26);
	p[len++] = '\n';
	return (size_t)len;
}

static void *gen_main(void *arg)
{
	struct gen_job *j = arg;
	uint64_t i;
	unsigned char *p = j->dst;

	for (i = j->first; i < j->first + j->count; i++) {
		const uint64_t r = rnd(i, j->seed);
		switch (j->f) {
		case U32: {
			const uint32_t v = (uint32_t)r;
			memcpy(p, &v, 4);
			p += 4;
			break;
		}
		case U64:
			memcpy(p, &r, 8);
			p += 8;
			break;
		case REC16:
			memcpy(p, &r, 8);
			memcpy(p + 8, &i, 8);
			p += 16;
			break;
		case KV:
			p += kv_line(p, i, j->seed);
			break;
		case KVLOG:
			p += kvlog_line(p, i, j->seed);
			break;
		}
	}
	j->bytes = (size_t)(p - j->dst);
	return NULL;
}

static int gen(enum fmt f, uint64_t n, uint64_t seed, const char *path)
{
	const unsigned t = nthreads();
	struct gen_job *jobs = calloc(t, sizeof *jobs);
	pthread_t *th = calloc(t, sizeof *th);
	const size_t rs = rec_size(f);
	const size_t line_max = f == KV ? KV_MAX : f == KVLOG ? KVLOG_MAX : 0;
	const size_t cap = line_max ? n * line_max : n * rs;
	unsigned char *buf;
	size_t off = 0;
	unsigned i;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)(cap ? cap : 1))) {
		perror(path);
		return 2;
	}
	buf = mmap(NULL, cap ? cap : 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (buf == MAP_FAILED) {
		perror(path);
		return 2;
	}
	for (i = 0; i < t; i++) {
		jobs[i].f = f;
		jobs[i].first = n / t * i;
		jobs[i].count = i + 1 < t ? n / t : n - n / t * i;
		jobs[i].seed = seed;
		jobs[i].dst = buf + (line_max ? jobs[i].first * line_max : jobs[i].first * rs);
		pthread_create(&th[i], NULL, gen_main, &jobs[i]);
	}
	for (i = 0; i < t; i++) {
		pthread_join(th[i], NULL);
		/* kv lines vary in length: close the gaps between the parts. */
		if (line_max)
			memmove(buf + off, jobs[i].dst, jobs[i].bytes);
		off += jobs[i].bytes;
	}
	munmap(buf, cap ? cap : 1);
	if (ftruncate(fd, (off_t)off) || close(fd)) {
		perror(path);
		return 2;
	}
	free(jobs);
	free(th);
	return 0;
}

/* --- sum and check ------------------------------------------------------ */

struct map {
	const unsigned char *p;
	size_t len;
};

static int map_file(const char *path, struct map *m)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		return -1;
	}
	m->len = (size_t)st.st_size;
	m->p = m->len ? mmap(NULL, m->len, PROT_READ, MAP_SHARED, fd, 0) : (const unsigned char *)"";
	close(fd);
	if (m->p == MAP_FAILED) {
		perror(path);
		return -1;
	}
	madvise((void *)m->p, m->len, MADV_SEQUENTIAL);
	return 0;
}

static uint64_t kv_key(const unsigned char *p, const unsigned char *end)
{
	uint64_t k = 0;
	while (p < end && *p >= '0' && *p <= '9')
		k = k * 10 + (uint64_t)(*p++ - '0');
	return k;
}

struct scan_job {
	enum fmt f;
	const unsigned char *p, *end;	/* whole records or lines */
	bool order;			/* check the order too */
	uint64_t count, sum, first_key, last_key;
	uint64_t disorder;		/* record number (from 1 in the part) of the first
					 * key below its predecessor, or 0 */
};

static uint64_t key_of(enum fmt f, const unsigned char *p, const unsigned char *end)
{
	uint64_t k = 0;
	if (f == U32) {
		uint32_t v;
		memcpy(&v, p, 4);
		return v;
	}
	if (f == U64 || f == REC16) {
		memcpy(&k, p, 8);
		return k;
	}
	return kv_key(p, end);
}

static void *scan_main(void *arg)
{
	struct scan_job *j = arg;
	const unsigned char *p = j->p;
	const size_t rs = rec_size(j->f);
	uint64_t prev = 0;

	while (p < j->end) {
		const unsigned char *next = rs ? p + rs : memchr(p, '\n', (size_t)(j->end - p));
		uint64_t key;
		next = next ? next + (rs ? 0 : 1) : j->end;
		j->sum += hash_bytes(p, (size_t)(next - p));
		if (j->order) {
			key = key_of(j->f, p, next);
			if (j->count == 0)
				j->first_key = key;
			else if (key < prev && !j->disorder)
				j->disorder = j->count + 1;
			prev = key;
		}
		j->count++;
		p = next;
	}
	j->last_key = prev;
	return NULL;
}

/* Count, sum and (when order) sortedness of a mapped file; 0 when in
 * order, else the byte offset + 1 of a part with a record out of order. */
static uint64_t scan(enum fmt f, const struct map *m, bool order, uint64_t *count, uint64_t *sum)
{
	const unsigned t = nthreads();
	struct scan_job *jobs = calloc(t, sizeof *jobs);
	pthread_t *th = calloc(t, sizeof *th);
	const size_t rs = rec_size(f);
	size_t start = 0;
	uint64_t bad = 0;
	unsigned i;

	for (i = 0; i < t; i++) {
		size_t end = i + 1 == t ? m->len : m->len / t * (i + 1);
		if (end < start)
			end = start;
		if (rs)
			end -= (end - start) % rs;
		else if (end < m->len) {
			const unsigned char *nl = memchr(m->p + end, '\n', m->len - end);
			end = nl ? (size_t)(nl - m->p) + 1 : m->len;
		}
		jobs[i].f = f;
		jobs[i].p = m->p + start;
		jobs[i].end = m->p + end;
		jobs[i].order = order;
		pthread_create(&th[i], NULL, scan_main, &jobs[i]);
		start = end;
	}
	*count = *sum = 0;
	for (i = 0; i < t; i++) {
		pthread_join(th[i], NULL);
		*count += jobs[i].count;
		*sum += jobs[i].sum;
	}
	for (i = 0; order && i < t && !bad; i++) {
		if (jobs[i].disorder)
			bad = (uint64_t)(jobs[i].p - m->p) + 1;
		/* Across parts: the first key of a part against the last before it. */
		if (i > 0 && jobs[i].count) {
			unsigned j = i;
			while (j > 0 && !jobs[j - 1].count)
				j--;
			if (j > 0 && jobs[i].first_key < jobs[j - 1].last_key)
				bad = (uint64_t)(jobs[i].p - m->p) + 1;
		}
	}
	free(jobs);
	free(th);
	return bad;
}

int main(int argc, char **argv)
{
	struct map in, out;
	uint64_t n_in, s_in, n_out, s_out, bad;

	if (argc == 6 && !strcmp(argv[1], "gen"))
		return gen(parse_fmt(argv[2]), strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0),
			   argv[5]);
	if (argc == 4 && !strcmp(argv[1], "sum")) {
		if (map_file(argv[3], &in))
			return 2;
		scan(parse_fmt(argv[2]), &in, false, &n_in, &s_in);
		printf("%" PRIu64 " %016" PRIx64 "\n", n_in, s_in);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "check")) {
		const enum fmt f = parse_fmt(argv[2]);
		if (map_file(argv[3], &in) || map_file(argv[4], &out))
			return 2;
		scan(f, &in, false, &n_in, &s_in);
		bad = scan(f, &out, true, &n_out, &s_out);
		if (bad) {
			printf("NOT SORTED: %s, near byte %" PRIu64 "\n", argv[4], bad - 1);
			return 1;
		}
		if (n_in != n_out || s_in != s_out) {
			printf("NOT THE SAME RECORDS: %s has %" PRIu64 " (sum %016" PRIx64 "), %s has %"
			       PRIu64 " (sum %016" PRIx64 ")\n", argv[3], n_in, s_in, argv[4], n_out, s_out);
			return 1;
		}
		printf("ok: %" PRIu64 " records sorted, checksum %016" PRIx64 "\n", n_out, s_out);
		return 0;
	}
	fprintf(stderr, "usage: scalecheck gen FORMAT COUNT SEED FILE | sum FORMAT FILE | "
			"check FORMAT IN OUT\n");
	return 2;
}
