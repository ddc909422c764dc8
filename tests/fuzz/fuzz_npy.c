/* The .npy header reader (npy_open) on a whole file in memory, as one
 * input, with no key field named and with one. */
#include "config.h"

#include <string.h>

#include "../../src/clsort.h"
#include "../../src/npy.h"
#include "fuzz.h"

static void open_one(const uint8_t *data, size_t size, const char *field)
{
	struct in_file file;
	struct in_set set;
	struct npy_info info;

	memset(&file, 0, sizeof file);
	file.name = "fuzz.npy";
	file.data = data;
	file.size = size;
	set.files = &file;
	set.count = 1;
	set.bytes = size;
	npy_open(&set, field, &info);
	npy_free(&info);
}

const unsigned long fuzz_iterations = 200000;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	open_one(data, size, NULL);
	open_one(data, size, "k");
	return 0;
}
