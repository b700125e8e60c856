/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef SLUICE_TESTS_UNIT_EAL_RUNTIME_DIR_H
#define SLUICE_TESTS_UNIT_EAL_RUNTIME_DIR_H

/*
 * The EAL leaves its runtime directory (config and fbarray files, about
 * 6 MB under --no-huge) behind when a process exits; every test binary
 * has its own --file-prefix, so each run would add one. Call this after
 * rte_eal_init(): the directory goes when the test exits.
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

static inline void
test_eal_dir_remove_at_exit(void)
{
	snprintf(test_eal_dir, sizeof(test_eal_dir), "%s",
		 rte_eal_get_runtime_dir());
	(void)atexit(test_eal_dir_remove);
}

#endif
