#include "config.h"
#include "writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

bool out_seekable(struct out_writer *w)
{
	struct stat st;
	const int fl = w->mem || w->map ? -1 : fcntl(w->fd, F_GETFL);

	return fl >= 0 && !(fl & O_APPEND) && fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode) &&
	       lseek(w->fd, 0, SEEK_CUR) >= 0;
}

long long out_stdout_end(struct out_writer *w)
{
	struct stat st;
	const off_t here = out_seekable(w) ? lseek(w->fd, 0, SEEK_CUR) : -1;

	return here >= 0 && fstat(w->fd, &st) == 0 && st.st_size == here ? (long long)here : -1;
}
