/* The file named by -o, for output.c: what the output is written to (a
 * temporary file beside it, or the file itself), and how the complete
 * result gets there, the file keeping its identity as with sort -o. */
#ifndef CLSORT_OUTFILE_H
#define CLSORT_OUTFILE_H

#include <stdbool.h>

struct out_dest {
	char *final_path;	/* the file, its symbolic links followed */
	char *dir;		/* its directory */
	bool temp;		/* written to a temporary file, then... */
	char *tmp_path;		/* ...renamed from this name, or... */
	bool unnamed;		/* ...linked from an unnamed file (through tmp_path), or... */
	bool copy;		/* ...copied into the file (target) */
	int target;
	bool sync;		/* durable before it gets its name (--sync) */
};

/* Open what the output to path is written to: where path is (or will be)
 * a regular file of one name, a temporary file in its directory; where it
 * is a regular file of other names too, or names an open descriptor
 * (/dev/stdout), a temporary file copied into it at the end; else (a
 * device, a pipe) path itself.  The descriptor to write, or -1 after a
 * message. */
int dest_open(struct out_dest *d, const char *path, bool sync);

/* The output written to fd (from dest_open) is complete: make it durable
 * with d->sync, give it its place and close fd.  0, or CLS_E_FAIL or
 * CLS_E_PIPE after a message naming name; fd is closed either way. */
int dest_place(struct out_dest *d, int fd, const char *name);

/* Give up: close fd and remove what dest_open created. */
void dest_drop(struct out_dest *d, int fd);

#endif
