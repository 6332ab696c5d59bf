/* tests/oci/cri/pause.c: the pod's sandbox container, as Kubernetes' pause
 * is: it sleeps until SIGINT or SIGTERM, and reaps what is given to it
 * (the pod's orphans, when it is their pid 1). Built static by
 * tests/oci/test_cri.sh into the image it makes. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void bye(int sig)
{
	(void)sig;
	_exit(0);
}

static void reap(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = bye };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = reap;
	sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	for (;;)
		pause();
}
