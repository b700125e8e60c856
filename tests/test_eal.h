/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TESTS_TEST_EAL_H
#define SLUICE_TESTS_TEST_EAL_H

/*
 * The EAL of a unit test or a Google Benchmark binary: no hugepages, no
 * PCI, no shared config, errors only, and a --file-prefix of its own
 * (TAG_PID), so runs never share state.
 *
 * The EAL leaves its runtime directory (config and fbarray files, about
 * 6 MB under --no-huge) behind when a process exits, and every run has its
 * own prefix, so every run would add one: test_eal_start() removes it at
 * exit. Usable from C and C++.
 */

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_eal.h>

static char test_eal_dir[PATH_MAX];

static void
test_eal_dir_remove(void)
{
	char path[PATH_MAX + 256];
	struct dirent *e;
	DIR *d = opendir(test_eal_dir);

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", test_eal_dir, e->d_name);
		(void)unlink(path);
	}
	closedir(d);
	(void)rmdir(test_eal_dir);
}

/* rte_eal_init() as above with mem_mb MB of memory: 0, or -1 when the
 * EAL cannot start. */
static inline int
test_eal_start(const char *tag, unsigned int mem_mb)
{
	char a0[] = "test", a1[] = "--no-huge", a2[] = "-m", a4[] = "--no-pci",
	     a5[] = "--no-shconf", a6[] = "--log-level=error";
	char mem[16], prefix[96];
	char *argv[] = { a0, a1, a2, mem, a4, a5, a6, prefix, NULL };

	snprintf(mem, sizeof(mem), "%u", mem_mb);
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s_%d", tag,
		 (int)getpid());
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0)
		return -1;
	snprintf(test_eal_dir, sizeof(test_eal_dir), "%s",
		 rte_eal_get_runtime_dir());
	(void)atexit(test_eal_dir_remove);
	return 0;
}

#endif /* SLUICE_TESTS_TEST_EAL_H */
