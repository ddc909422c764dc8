/* The number parsers of every key type on any text: no read outside it, and
 * for the invertible (integer) types a parsed value maps to a sortable key
 * and back to itself. */
#include "config.h"

#include <stdlib.h>

#include "../../src/keys.h"
#include "fuzz.h"

const unsigned long fuzz_iterations = 300000;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct key_type *kt;

	for (kt = key_types; kt->name; kt++) {
		uint64_t raw;

		if (kt->parse((const char *)data, size, &raw) != KEY_OK)
			continue;
		if (kt->invertible && kt->raw(kt->sortable(raw)) != raw)
			abort();
	}
	return 0;
}
