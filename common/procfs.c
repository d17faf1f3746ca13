/* /proc/PID/stat (procfs.h). */
#include "procfs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int procfs_stat(pid_t pid, pid_t tid, struct procfs_stat *st)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	if (tid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ')
		return -1;
	memset(st, 0, sizeof(*st));
	st->state = p[2];
	p++;
	for (int field = 3; field <= 22; field++) { /* p: the blank before field `field` */
		if (field == 9)
			st->flags = strtoull(p + 1, NULL, 10);
		else if (field == 14)
			st->utime = strtoull(p + 1, NULL, 10);
		else if (field == 15)
			st->stime = strtoull(p + 1, NULL, 10);
		else if (field == 22)
			st->starttime = strtoull(p + 1, NULL, 10);
		if (field < 22 && (p = strchr(p + 1, ' ')) == NULL)
			return -1;
	}
	return 0;
}

uint64_t procfs_starttime(pid_t pid)
{
	struct procfs_stat st;

	if (procfs_stat(pid, 0, &st) != 0)
		return 0;
	return st.starttime ? st.starttime : 1;
}

long procfs_uid(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) != 0)
		return -1;
	return (long)st.st_uid;
}
