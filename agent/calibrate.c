/*
 * `vsched-agent --calibrate`: the node capacities the controller's fitness heuristic
 * divides (MemBUS M and N, paper 000 Sect. 4: "derived from microbenchmarking").
 *  - M: a short memory streaming run (copy between two buffers much larger than the last
 *    level cache), counting bytes read plus bytes written per second on one CPU;
 *  - N: the fastest NIC's link speed from /sys/class/net/IF/speed (Mb/s), where a driver
 *    reports one (virtual NICs often report -1: then 0, unknown).
 */
#include "agent.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define CAL_BUF (64u << 20) /* bytes per buffer: far beyond any LLC here */

double calib_mem(unsigned ms)
{
	char *src = malloc(CAL_BUF), *dst = malloc(CAL_BUF);
	mono_ns t0, t1, end;
	uint64_t moved = 0;
	double rate = 0;

	if (!src || !dst)
		goto out;
	memset(src, 1, CAL_BUF); /* fault every page in before timing */
	memset(dst, 2, CAL_BUF);
	t0 = mono_now();
	end = t0 + (uint64_t)ms * NSEC_PER_MSEC;
	do {
		memcpy(dst, src, CAL_BUF);
		moved += 2ULL * CAL_BUF;                            /* read + write */
		src[moved % CAL_BUF] ^= dst[(moved / 7) % CAL_BUF]; /* keep the copy live */
		t1 = mono_now();
	} while (mono_before(t1, end));
	rate = (double)moved * (double)NSEC_PER_SEC / (double)(t1 - t0);
out:
	free(src);
	free(dst);
	return rate;
}

double calib_net(const char *sysfs_net, char *ifname, size_t iflen)
{
	DIR *d = opendir(sysfs_net);
	struct dirent *de;
	long best = 0;

	if (ifname && iflen)
		ifname[0] = '\0';
	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		char path[512];
		FILE *f;
		long mbps;

		if (de->d_name[0] == '.' || strcmp(de->d_name, "lo") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/speed", sysfs_net, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		/* Reading speed of a link that is down fails with EINVAL: skipped. */
		if (fscanf(f, "%ld", &mbps) == 1 && mbps > best) {
			best = mbps;
			if (ifname && iflen)
				snprintf(ifname, iflen, "%s", de->d_name);
		}
		fclose(f);
	}
	closedir(d);
	return (double)best * 1e6 / 8; /* Mb/s -> bytes/s */
}
