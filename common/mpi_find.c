/*
 * Finding the interposer for a program's MPI library (see mpi_find.h).
 */
#include "mpi_find.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LDD_MAX 65536 /* bytes of ldd output read */

extern char **environ;

int mpi_find_parse_ldd(const char *text, char *names, size_t len)
{
	size_t used = 0;
	int n = 0;

	for (const char *line = text; *line != '\0';) {
		const char *end = strchr(line, '\n');
		const char *arrow, *p = line;
		size_t nl;

		if (end == NULL)
			end = line + strlen(line);
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		arrow = strstr(p, " => ");
		if (arrow != NULL && arrow < end && arrow > p && arrow[4] == '/') {
			nl = (size_t)(arrow - p);
			if (used + nl + 1 <= len) {
				memcpy(names + used, p, nl);
				names[used + nl] = '\0';
				used += nl + 1;
				n++;
			}
		}
		line = *end != '\0' ? end + 1 : end;
	}
	return n;
}

/* Like execvp's search: path of an executable regular file, or -1 with errno. */
static int resolve(const char *prog, char *path, size_t len)
{
	const char *dirs = getenv("PATH");
	struct stat st;

	if (strchr(prog, '/') != NULL) {
		if (snprintf(path, len, "%s", prog) >= (int)len)
			return errno = ENAMETOOLONG, -1;
		return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? 0 : (errno = ENOENT, -1);
	}
	if (dirs == NULL || *dirs == '\0')
		dirs = "/usr/local/bin:/usr/bin:/bin";
	for (const char *d = dirs; *d != '\0';) {
		const char *colon = strchr(d, ':');
		int dl = colon != NULL ? (int)(colon - d) : (int)strlen(d);

		if (snprintf(path, len, "%.*s/%s", dl, dl > 0 ? d : ".", prog) < (int)len &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0)
			return 0;
		d += dl + (colon != NULL);
	}
	errno = ENOENT;
	return -1;
}

/* Runs `ldd path` and reads its stdout into buf (NUL-terminated). Returns its exit status,
 * or -1 if it could not be run. */
static int run_ldd(const char *path, char *buf, size_t len)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = {"ldd", (char *)path, NULL};
	int fds[2], status = -1;
	size_t got = 0;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, "ldd", &fa, NULL, argv, environ) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	while (pid > 0) {
		char drain[512];
		ssize_t r = got + 1 < len ? read(fds[0], buf + got, len - 1 - got)
		                          : read(fds[0], drain, sizeof(drain));
		if (r > 0 && got + 1 < len)
			got += (size_t)r;
		else if (r == 0 || (r < 0 && errno != EINTR))
			break;
	}
	buf[got] = '\0';
	close(fds[0]);
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (pid <= 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool listed(const char *names, int n, const char *name)
{
	for (int i = 0; i < n; i++, names += strlen(names) + 1)
		if (strcmp(names, name) == 0)
			return true;
	return false;
}

/* Appends the interposers in dir (their soname directories) to have, for the message. */
static void search_dir(const char *dir, const char *names, int n, char *out, size_t outlen,
                       bool *found, char *have, size_t havelen)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while (!*found && (e = readdir(d)) != NULL) {
		char lib[4096];

		if (e->d_name[0] == '.' ||
		    snprintf(lib, sizeof(lib), "%s/%s/%s", dir, e->d_name, MPI_FIND_LIB) >=
		        (int)sizeof(lib) ||
		    access(lib, R_OK) != 0)
			continue;
		if (listed(names, n, e->d_name) && strlen(lib) < outlen) {
			snprintf(out, outlen, "%s", lib);
			*found = true;
		} else if (strlen(have) + strlen(e->d_name) + 3 < havelen) {
			strcat(have, *have ? ", " : "");
			strcat(have, e->d_name);
		}
	}
	closedir(d);
}

int mpi_find_interposer(const char *program, const char *dirs, char *out, size_t outlen, char *why,
                        size_t whylen)
{
	char path[4096], have[512] = "", *text = NULL, *names = NULL;
	bool found = false;
	int n, rc = -1;

	if (resolve(program, path, sizeof(path)) != 0) {
		snprintf(why, whylen, "%s: %s", program, strerror(errno));
		return -1;
	}
	text = malloc(LDD_MAX);
	names = malloc(LDD_MAX);
	if (text == NULL || names == NULL) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	if (run_ldd(path, text, LDD_MAX) != 0) {
		snprintf(why, whylen,
		         "%s: not a dynamic executable (ldd): cannot tell its MPI library", path);
		goto out;
	}
	n = mpi_find_parse_ldd(text, names, LDD_MAX);
	for (const char *d = dirs; *d != '\0' && !found;) {
		const char *colon = strchr(d, ':');
		int dl = colon != NULL ? (int)(colon - d) : (int)strlen(d);
		char dir[4096];

		if (dl > 0 && dl < (int)sizeof(dir)) {
			snprintf(dir, sizeof(dir), "%.*s", dl, d);
			search_dir(dir, names, n, out, outlen, &found, have, sizeof(have));
		}
		d += dl + (colon != NULL);
	}
	if (found)
		rc = 0;
	else
		snprintf(why, whylen,
		         "%s links no MPI library libapprate-mpi was built for (built for: %s)",
		         path, *have ? have : "none found");
out:
	free(text);
	free(names);
	return rc;
}
