/*
 * vsched/freezer.c: `stop` parking through the cgroup freezer — one write per park or
 * unpark per process, whatever its number of threads.
 *
 * Why: SIGSTOP/SIGCONT wake every thread of a process (each must enter the group stop
 * itself), and that CPU is charged to the reservation; with the v1 freezer a frozen thread
 * that was asleep is never woken (the kernel moves a freezable sleep straight to
 * TASK_FROZEN and back; the v2 freezer wakes it at freeze and thaw, as signals do), and a
 * wake-up that arrives while frozen is kept for the thaw. Measured here: ~4-5 µs per write,
 * the same as one signal.
 *
 * How: each task gets its own cgroup, a child of the one it is in: <cur>/vsched.<pid>
 * (so every limit of <cur> still applies, and the way back is the parent directory). The
 * process (all its threads, and threads it creates later) is moved there, parked by writing
 * FROZEN/THAWED to freezer.state (cgroup v1 freezer hierarchy) or 1/0 to cgroup.freeze
 * (cgroup v2), and given back by thawing, moving every process of the cgroup to the parent
 * and removing the directory (freezer_detach; the watchdog does the same after a crash,
 * from /proc/PID/cgroup alone).
 *
 * Only the task is parked: a process it forks starts in its cgroup (the kernel puts a child
 * in its parent's) and is moved to the parent cgroup as soon as vsched sees it
 * (freezer_evict), as SIGSTOP would not reach it either. A child left in the cgroup would be
 * frozen whenever the task is parked, and it cannot run while the task is raised either
 * (the child starts SCHED_OTHER through SCHED_RESET_ON_FORK, on the task's CPU): a task
 * that waits for it by spinning (LeakSanitizer's exit-time leak check spins in
 * sched_yield() until the tracer process it cloned is done) would never see it finish.
 *
 * v1 only: freezing a cgroup while no other is frozen switches a kernel static key, which
 * patches kernel text on every CPU (2.7-4.5 ms per write here). A sentinel — an empty cgroup
 * vsched.sentinel.<vsched pid> kept frozen while vsched runs — keeps the key on, so every
 * park is a plain write.
 *
 * A cgroup still busy after that (a process that takes long to exit holds it) is left thawed
 * and retried once a second for a minute (freezer_retry, from the housekeeping sweep).
 *
 * Everything but freezer_set runs on the API thread or in the guardian; freezer_set is one
 * pwrite(), dispatcher-safe.
 */
#include "vsched.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define CG_PREFIX "vsched."

/*
 * True when the /proc/self/mountinfo line (modified) mounts the hierarchy of kind; fills
 * fz->mnt and fz->mroot. Fields: id parent maj:min root mountpoint opts... - fstype source
 * superopts.
 */
static bool mount_matches(char *line, int kind, struct freezer *fz)
{
	char *f[32], *save = NULL, *tok;
	int n = 0, sep = -1;

	for (tok = strtok_r(line, " \n", &save); tok && n < 32; tok = strtok_r(NULL, " \n", &save))
		f[n++] = tok;
	for (int i = 5; i < n && sep < 0; i++)
		if (strcmp(f[i], "-") == 0)
			sep = i;
	if (sep < 0 || sep + 1 >= n)
		return false;
	if (kind == FREEZER_V2 ? strcmp(f[sep + 1], "cgroup2") != 0
	                       : strcmp(f[sep + 1], "cgroup") != 0 || sep + 3 >= n ||
	                             strstr(f[sep + 3], "freezer") == NULL)
		return false;
	if (strlen(f[4]) >= sizeof(fz->mnt) || strlen(f[3]) >= sizeof(fz->mroot))
		return false;
	snprintf(fz->mnt, sizeof(fz->mnt), "%s", f[4]);
	snprintf(fz->mroot, sizeof(fz->mroot), "%s", strcmp(f[3], "/") == 0 ? "" : f[3]);
	fz->kind = kind;
	return true;
}

int freezer_find(struct freezer *fz, int kind)
{
	char line[1024];
	FILE *f;

	memset(fz, 0, sizeof(*fz));
	fz->kind = FREEZER_NONE;
	fz->sentinel_fd = -1;
	if (kind != FREEZER_V1 && kind != FREEZER_V2)
		return -1;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (mount_matches(line, kind, fz))
			break;
	fclose(f);
	return fz->kind == kind ? 0 : -1;
}

char *freezer_cgroup_path(int kind, char *line)
{
	char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

	if (!c2)
		return NULL;
	*c2 = '\0';
	/* v2: "0::PATH" (hierarchy 0, no controllers); v1: "N:...freezer...:PATH" */
	bool hit = kind == FREEZER_V2 ? c1 == line + 1 && line[0] == '0' && c1 + 1 == c2
	                              : strstr(c1 + 1, "freezer") != NULL;
	if (!hit)
		return NULL;
	c2[1 + strcspn(c2 + 1, "\n")] = '\0';
	return c2 + 1;
}

/*
 * The cgroup of pid in the hierarchy of fz, as a directory path, into buf. Returns 0, or -1
 * when pid is gone or not below the mount's root.
 */
static int cgroup_dir(const struct freezer *fz, pid_t pid, char *buf, size_t len)
{
	char path[64], line[PATH_MAX + 64], *p = NULL;
	size_t rl = strlen(fz->mroot);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!p && fgets(line, sizeof(line), f))
		p = freezer_cgroup_path(fz->kind, line);
	fclose(f);
	if (!p)
		return -1;
	if (strncmp(p, fz->mroot, rl) != 0 || (p[rl] != '/' && p[rl] != '\0'))
		return -1;
	if ((size_t)snprintf(buf, len, "%s%s", fz->mnt, p + rl) >= len)
		return -1;
	/* the root cgroup: no trailing "/" */
	if (strcmp(buf + strlen(buf) - 1, "/") == 0)
		buf[strlen(buf) - 1] = '\0';
	return 0;
}

static int write_str(const char *dir, const char *file, const char *s)
{
	char path[PATH_MAX];
	int fd, rc = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static const char *state_file(int kind)
{
	return kind == FREEZER_V2 ? "cgroup.freeze" : "freezer.state";
}

int freezer_set(int state_fd, int kind, bool frozen)
{
	const char *s = kind == FREEZER_V2 ? (frozen ? "1" : "0") : (frozen ? "FROZEN" : "THAWED");

	return pwrite(state_fd, s, strlen(s), 0) < 0 ? -errno : 0;
}

int freezer_sentinel_start(struct freezer *fz)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];

	if (fz->kind != FREEZER_V1)
		return 0;
	snprintf(dir, sizeof(dir), "%s/%ssentinel.%d", fz->mnt, CG_PREFIX, (int)getpid());
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", dir, state_file(fz->kind));
	fz->sentinel_fd = open(path, O_RDWR | O_CLOEXEC);
	if (fz->sentinel_fd < 0 || freezer_set(fz->sentinel_fd, fz->kind, true) < 0) {
		int e = errno;
		if (fz->sentinel_fd >= 0)
			close(fz->sentinel_fd);
		fz->sentinel_fd = -1;
		rmdir(dir);
		return -e;
	}
	return 0;
}

void freezer_sentinel_remove(const struct freezer *fz, pid_t owner)
{
	char dir[PATH_MAX];

	if (fz->kind != FREEZER_V1)
		return;
	snprintf(dir, sizeof(dir), "%s/%ssentinel.%d", fz->mnt, CG_PREFIX, (int)owner);
	write_str(dir, state_file(fz->kind), "THAWED");
	rmdir(dir);
}

int freezer_attach(const struct freezer *fz, pid_t pid, char *dir, size_t dirlen, int *state_fd)
{
	char cur[PATH_MAX], path[PATH_MAX + 32], pidbuf[24];
	int rc;

	*state_fd = -1;
	if (cgroup_dir(fz, pid, cur, sizeof(cur)) < 0)
		return -ESRCH;
	if ((size_t)snprintf(dir, dirlen, "%s/%s%d", cur, CG_PREFIX, (int)pid) >= dirlen)
		return -ENAMETOOLONG;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
	rc = write_str(dir, "cgroup.procs", pidbuf);
	if (rc == 0) {
		snprintf(path, sizeof(path), "%s/%s", dir, state_file(fz->kind));
		*state_fd = open(path, O_RDWR | O_CLOEXEC);
		if (*state_fd < 0)
			rc = -errno;
	}
	if (rc) {
		write_str(cur, "cgroup.procs", pidbuf);
		rmdir(dir);
	}
	return rc;
}

/*
 * Moves every process listed in dir/cgroup.procs but keep (0: none) to parent. Returns how
 * many it moved, or -errno when the list cannot be read (-ENOENT: dir is gone).
 */
static int move_all(const char *dir, const char *parent, pid_t keep)
{
	char path[PATH_MAX + 16], line[32];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (keep > 0 && atol(line) == (long)keep)
			continue;
		/* (a process that exited meanwhile: ESRCH, nothing to move) */
		if (write_str(parent, "cgroup.procs", line) == 0)
			n++;
	}
	fclose(f);
	return n;
}

/* The parent of dir, one of our cgroups (named vsched.*), into parent. 0 or -errno. */
static int parent_of(const char *dir, char *parent, size_t len)
{
	char *slash;

	if (strlen(dir) >= len)
		return -ENAMETOOLONG;
	strcpy(parent, dir);
	slash = strrchr(parent, '/');
	if (!slash || strncmp(slash + 1, CG_PREFIX, strlen(CG_PREFIX)) != 0)
		return -EINVAL;
	*slash = '\0';
	return 0;
}

/* How often freezer_evict and freezer_release re-read the list: a child may fork meanwhile. */
#define MOVE_PASSES 3
/* How long freezer_release waits for an exiting process to leave the cgroup. */
#define RELEASE_WAIT_MS 100
/* Cgroups still busy after that, retried by freezer_retry (at most this many, this often). */
#define RETRY_MAX   32
#define RETRY_TRIES 60

/* The cgroups freezer_release left behind busy (thawed): API thread only. */
static struct {
	char *dir;
	int tries;
} retry[RETRY_MAX];

static void retry_add(const char *dir)
{
	for (int i = 0; i < RETRY_MAX; i++)
		if (retry[i].dir == NULL) {
			retry[i].dir = strdup(dir);
			retry[i].tries = 0;
			return;
		}
	log_warnx("freezer cgroup %s: %d busy cgroups retried already: this one is left (thawed)",
	          dir, RETRY_MAX);
}

void freezer_retry(void)
{
	char parent[PATH_MAX];

	for (int i = 0; i < RETRY_MAX; i++) {
		if (retry[i].dir == NULL)
			continue;
		if (parent_of(retry[i].dir, parent, sizeof(parent)) == 0)
			move_all(retry[i].dir, parent, 0);
		if (rmdir(retry[i].dir) == 0 || errno == ENOENT)
			log_info("freezer cgroup %s removed (it was busy)", retry[i].dir);
		else if (++retry[i].tries < RETRY_TRIES)
			continue;
		else
			log_warnx("freezer cgroup %s still busy after %d tries: left (thawed)",
			          retry[i].dir, RETRY_TRIES);
		free(retry[i].dir);
		retry[i].dir = NULL;
	}
}

int freezer_evict(const char *dir, pid_t keep)
{
	char parent[PATH_MAX];
	int rc, n, moved = 0;

	rc = parent_of(dir, parent, sizeof(parent));
	if (rc)
		return rc;
	for (int pass = 0; pass < MOVE_PASSES; pass++) {
		n = move_all(dir, parent, keep);
		if (n < 0)
			return n;
		if (n == 0)
			break;
		moved += n;
	}
	return moved;
}

int freezer_release(const struct freezer *fz, const char *dir)
{
	char parent[PATH_MAX];
	int rc;

	rc = parent_of(dir, parent, sizeof(parent));
	if (rc)
		return rc;
	/* Thawed first: whatever cannot be moved out (rmdir: EBUSY) is at least left running. */
	rc = write_str(dir, state_file(fz->kind), fz->kind == FREEZER_V2 ? "0" : "THAWED");
	if (rc == -ENOENT)
		return 0;
	/*
	 * Repeated while rmdir finds the cgroup busy: a process forked while the others were
	 * moved is moved in the next pass; a process that is exiting is still listed but
	 * cannot be moved (the kernel skips it) and holds the cgroup until it has freed its
	 * memory and left it (here ~110 ms for one with 3 GiB touched, SIGKILLed), which is
	 * waited for up to RELEASE_WAIT_MS. Beyond that the cgroup is left, thawed.
	 */
	for (int pass = 0;; pass++) {
		move_all(dir, parent, 0);
		if (rmdir(dir) == 0 || errno == ENOENT)
			return rc;
		if (errno != EBUSY || pass >= MOVE_PASSES + RELEASE_WAIT_MS / 2)
			break;
		if (pass >= MOVE_PASSES - 1)
			usleep(2000);
	}
	rc = rc ? rc : -errno;
	if (rc == -EBUSY)
		retry_add(dir);
	return rc;
}

/* How deep freezer_release_gone looks below the mount (systemd nests 3-5 levels). */
#define GONE_MAX_DEPTH 8

/* Finds the directory named name at most depth levels below dir; its path into dir. */
static bool find_dir(char *dir, size_t len, const char *name, int depth)
{
	size_t at = strlen(dir);
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (depth < 0 || !(d = opendir(dir)))
		return false;
	while (!found && (de = readdir(d)) != NULL) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(dir + at, len - at, "/%s", de->d_name) >= len - at)
			continue;
		found = strcmp(de->d_name, name) == 0 || find_dir(dir, len, name, depth - 1);
	}
	closedir(d);
	if (!found)
		dir[at] = '\0';
	return found;
}

int freezer_release_gone(const struct freezer *fz, pid_t pid)
{
	char dir[PATH_MAX], name[32];

	if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
		return 0; /* alive (or the pid reused): its cgroup is not ours to judge */
	snprintf(name, sizeof(name), "%s%d", CG_PREFIX, (int)pid);
	snprintf(dir, sizeof(dir), "%s", fz->mnt);
	if (!find_dir(dir, sizeof(dir), name, GONE_MAX_DEPTH))
		return 0;
	return freezer_release(fz, dir);
}

int freezer_detach(const struct freezer *fz, pid_t pid)
{
	char dir[PATH_MAX], name[32], *slash;

	if (cgroup_dir(fz, pid, dir, sizeof(dir)) < 0)
		return -ESRCH;
	snprintf(name, sizeof(name), "/%s%d", CG_PREFIX, (int)pid);
	slash = strrchr(dir, '/');
	if (!slash || strcmp(slash, name) != 0)
		return 0; /* not in a cgroup of ours (moved by someone else): leave it */
	return freezer_release(fz, dir);
}
