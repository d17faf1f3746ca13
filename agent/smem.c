/*
 * smem (sampled memory): per-process memory bandwidth, with its source (DESIGN.md §4,
 * paper 000 Sect. 5.2):
 *  1. pmu:     perf_event_open(PERF_COUNT_HW_CACHE_MISSES) on the process (all threads,
 *              inherited by children), bytes = misses x cache line size;
 *  2. resctrl: an MBM monitoring group per process under /sys/fs/resctrl/mon_groups,
 *              bytes = sum of mon_data/mon_L3_* /mbm_total_bytes;
 *  3. app:     the bytes the application reported through libapprate (BYTES);
 *  4. none:    unavailable.
 * Hardware sources are detected once at start (one log line each when absent); the probes
 * are injectable (struct smem_ops) so tests can play a machine with or without a PMU.
 */
#include "agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"

static int real_perf_open(pid_t pid)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_CACHE_MISSES;
	attr.inherit = 1;
	attr.exclude_hv = 1;
	/* pid, any CPU: counts the process wherever it runs (a virtualised counter). */
	fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	return (int)fd;
}

static int real_perf_read(int fd, uint64_t *count)
{
	uint64_t v;
	ssize_t n = read(fd, &v, sizeof(v));

	if (n != (ssize_t)sizeof(v))
		return n < 0 ? -errno : -EIO;
	*count = v;
	return 0;
}

struct smem_ops smem_default_ops(void)
{
	struct smem_ops o = {
	    .perf_open = real_perf_open,
	    .perf_read = real_perf_read,
	    .resctrl_root = "/sys/fs/resctrl",
	};
	return o;
}

static unsigned line_size(void)
{
	long v = sysconf(_SC_LEVEL3_CACHE_LINESIZE);
	FILE *f;
	unsigned u;

	if (v > 0 && v <= 4096)
		return (unsigned)v;
	f = fopen("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size", "r");
	if (f) {
		if (fscanf(f, "%u", &u) == 1 && u > 0 && u <= 4096) {
			fclose(f);
			return u;
		}
		fclose(f);
	}
	return 64;
}

/* True when resctrl offers total memory bandwidth monitoring (MBM). */
static bool resctrl_has_mbm(const char *root, char *why, size_t whylen)
{
	char path[AGENT_ENDPOINT_MAX + 64], line[64];
	int n;
	FILE *f;
	bool found = false;

	n = snprintf(path, sizeof(path), "%s/info/L3_MON/mon_features", root);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(why, whylen, "resctrl_root too long");
		return false;
	}
	f = fopen(path, "r");
	if (!f) {
		snprintf(why, whylen, "%.100s: %s", path, strerror(errno));
		return false;
	}
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "mbm_total_bytes", 15) == 0)
			found = true;
	fclose(f);
	if (!found)
		snprintf(why, whylen, "%.100s: no mbm_total_bytes", path);
	return found;
}

void smem_detect(struct smem *m, const struct smem_ops *ops)
{
	int fd;

	memset(m, 0, sizeof(*m));
	m->ops = *ops;
	m->line_size = line_size();
	/* Probe on ourselves: if the agent cannot count its own misses, nobody's counts. */
	fd = m->ops.perf_open(getpid());
	if (fd >= 0) {
		uint64_t v;
		m->pmu = m->ops.perf_read(fd, &v) == 0;
		if (!m->pmu)
			snprintf(m->why_pmu, sizeof(m->why_pmu), "cache-miss counter unreadable");
		close(fd);
	} else {
		snprintf(m->why_pmu, sizeof(m->why_pmu), "perf_event_open(cache-misses): %s",
		         strerror(-fd));
	}
	m->resctrl = resctrl_has_mbm(m->ops.resctrl_root, m->why_resctrl, sizeof(m->why_resctrl));
	/* One line at start says which source the figures will carry, and why. */
	if (m->pmu)
		log_info("memory bandwidth: pmu (cache misses x %u bytes)", m->line_size);
	else if (m->resctrl)
		log_info("memory bandwidth: no PMU (%s); using resctrl MBM", m->why_pmu);
	else
		log_info("memory bandwidth: no PMU (%s), no resctrl MBM (%s); using "
		         "application-reported bytes, else none",
		         m->why_pmu, m->why_resctrl);
}

/* Makes a monitoring group for pid and moves all its threads there. */
static int resctrl_attach(struct smem *m, struct smem_proc *p, pid_t pid)
{
	char path[AGENT_ENDPOINT_MAX + 96], tpath[AGENT_ENDPOINT_MAX + 128];
	DIR *d;
	struct dirent *de;
	FILE *f;
	int moved = 0;

	snprintf(p->rc_path, sizeof(p->rc_path), "%s/mon_groups/vsched-agent-%d",
	         m->ops.resctrl_root, (int)pid);
	if (mkdir(p->rc_path, 0755) != 0 && errno != EEXIST)
		return -errno;
	p->rc_group = true;
	snprintf(tpath, sizeof(tpath), "%s/tasks", p->rc_path);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		/* resctrl takes one tid per write. */
		f = fopen(tpath, "w");
		if (!f)
			break;
		if (fprintf(f, "%s\n", de->d_name) > 0)
			moved++;
		fclose(f);
	}
	closedir(d);
	return moved > 0 ? 0 : -EIO;
}

static int resctrl_read(const struct smem_proc *p, uint64_t *bytes)
{
	char path[AGENT_ENDPOINT_MAX + 96], f_path[AGENT_ENDPOINT_MAX + 400];
	DIR *d;
	struct dirent *de;
	uint64_t sum = 0;
	int found = 0;

	snprintf(path, sizeof(path), "%s/mon_data", p->rc_path);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		unsigned long long v;
		FILE *f;
		if (strncmp(de->d_name, "mon_L3_", 7) != 0)
			continue;
		snprintf(f_path, sizeof(f_path), "%s/%s/mbm_total_bytes", path, de->d_name);
		f = fopen(f_path, "r");
		if (!f)
			continue;
		/* "Unavailable" (no RMID) does not parse and is skipped. */
		if (fscanf(f, "%llu", &v) == 1) {
			sum += v;
			found++;
		}
		fclose(f);
	}
	closedir(d);
	if (!found)
		return -ENODATA;
	*bytes = sum;
	return 0;
}

void smem_attach(struct smem *m, struct smem_proc *p, pid_t pid)
{
	memset(p, 0, sizeof(*p));
	p->perf_fd = -1;
	if (m->pmu) {
		int fd = m->ops.perf_open(pid);
		if (fd >= 0) {
			p->perf_fd = fd;
			return;
		}
		log_debug("pid %d: perf_event_open: %s", (int)pid, strerror(-fd));
	}
	if (m->resctrl) {
		int rc = resctrl_attach(m, p, pid);
		if (rc != 0)
			log_debug("pid %d: resctrl group: %s", (int)pid, strerror(-rc));
	}
}

void smem_detach(struct smem *m, struct smem_proc *p)
{
	(void)m;
	if (p->perf_fd >= 0)
		close(p->perf_fd);
	p->perf_fd = -1;
	if (p->rc_group) {
		/* The kernel moves remaining tasks back to the parent group. */
		if (rmdir(p->rc_path) != 0 && errno != ENOENT)
			log_debug("rmdir %s: %s", p->rc_path, strerror(errno));
		p->rc_group = false;
	}
}

uint8_t smem_read(struct smem *m, struct smem_proc *p, bool app_seen, uint64_t app_total,
                  uint64_t *bytes)
{
	uint64_t v;

	if (p->perf_fd >= 0 && m->ops.perf_read(p->perf_fd, &v) == 0) {
		*bytes = v * m->line_size;
		return PCTL_SRC_PMU;
	}
	if (p->rc_group && resctrl_read(p, &v) == 0) {
		*bytes = v;
		return PCTL_SRC_RESCTRL;
	}
	if (app_seen) {
		*bytes = app_total;
		return PCTL_SRC_APP;
	}
	*bytes = 0;
	return PCTL_SRC_NONE;
}
