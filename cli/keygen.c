/*
 * vschedctl keygen FILE [--node NAME | --role read|full]: a new CURVE key pair in the
 * ZeroMQ certificate form (common/curve.h): FILE, the public certificate to install in
 * the controller's allow-list, and FILE_secret, the pair to keep on the host that uses it.
 * Both are created mode 0600 and never overwrite a file. --node binds an agent's key to
 * its node name, --role sets what an administrator's key may do (docs/security.md).
 *
 * Also the loading of the administrator's own keys for the admin commands (-k and
 * --controller-key, or $VSCHED_KEY and $VSCHED_CONTROLLER_KEY).
 */
#include <stdio.h>
#include <string.h>

#include "ctladmin.h"
#include "curve.h"
#include "vschedctl.h"

int cmd_keygen(int argc, char **argv)
{
	const char *path = NULL, *node = NULL, *role = NULL;
	char why[512];

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--node") == 0 && i + 1 < argc) {
			node = argv[++i];
		} else if (strcmp(argv[i], "--role") == 0 && i + 1 < argc) {
			role = argv[++i];
		} else if (argv[i][0] != '-' && path == NULL) {
			path = argv[i];
		} else {
			args_fail("keygen",
			          "unexpected argument '%s' (usage: keygen FILE "
			          "[--node NAME | --role read|full])",
			          argv[i]);
		}
	}
	if (path == NULL || path[0] == '\0')
		args_fail("keygen", "missing FILE");
	if (node != NULL && role != NULL)
		args_fail("keygen",
		          "--node (an agent's key) and --role (an administrator's) exclude "
		          "each other");
	if (curve_keygen(path, node, role, why, sizeof(why)) != 0) {
		fprintf(stderr, "vschedctl: keygen: %s\n", why);
		return CLI_EXIT_FAIL;
	}
	printf("%s\t(public: copy to the controller's allow_dir/%s/)\n%s_secret\t(secret: keep "
	       "it here, mode 0600)\n",
	       path,
	       node   ? "agents"
	       : role ? "admins"
	              : "agents or admins",
	       path);
	return CLI_EXIT_OK;
}

int ctladmin_keys(const char *key, const char *server, struct zreq_curve *out)
{
	struct curve_cert mine, ctl;
	char why[512];

	if ((key == NULL) != (server == NULL)) {
		fprintf(stderr, "vschedctl: %s needs %s too\n",
		        key ? "-k (or $" CTL_KEY_ENV ")"
		            : "--controller-key (or $" CTL_SERVER_KEY_ENV ")",
		        key ? "--controller-key (or $" CTL_SERVER_KEY_ENV ")"
		            : "-k (or $" CTL_KEY_ENV ")");
		return CLI_EXIT_USAGE;
	}
	if (key == NULL)
		return 1;
	if (curve_cert_load(key, true, &mine, why, sizeof(why)) != 0 ||
	    curve_cert_load(server, false, &ctl, why, sizeof(why)) != 0) {
		fprintf(stderr, "vschedctl: %s\n", why);
		return CLI_EXIT_USAGE;
	}
	memcpy(out->pub, mine.pub, sizeof(out->pub));
	memcpy(out->sec, mine.sec, sizeof(out->sec));
	memcpy(out->server, ctl.pub, sizeof(out->server));
	memset(&mine, 0, sizeof(mine));
	return 0;
}
