/* tests/oci/sysctl_probe.c: what the sysctls test_kernel_view.sh sets do
 * to a process, one line each, the same under runc and moat. Run as uid
 * 1000 in a container with kernel.shmmax=65536, kernel.shm_rmid_forced=1,
 * kernel.msgmnb=4096, kernel.sem="250 32000 100 128",
 * fs.mqueue.msg_max=5 and net.ipv4.ip_unprivileged_port_start=80. */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *err(long rc)
{
	return rc < 0 ? strerror(errno) : "ok";
}

static long bind_port(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((unsigned short)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int s = socket(AF_INET, SOCK_STREAM, 0);
	long rc = bind(s, (struct sockaddr *)&a, sizeof(a));

	close(s);
	return rc;
}

int main(void)
{
	struct shmid_ds ds;
	struct msqid_ds mds;
	struct mq_attr ma;
	int id, q;
	void *p;
	mqd_t m;

	printf("shmget 65536: %s\n",
	       err(shmget(IPC_PRIVATE, 65536, IPC_CREAT | 0600)));
	printf("shmget 65537: %s\n",
	       err(shmget(IPC_PRIVATE, 65537, IPC_CREAT | 0600)));
	/* shm_rmid_forced: the last detach removes a segment */
	id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	p = shmat(id, NULL, 0);
	printf("shmat: %s\n", p == (void *)-1 ? strerror(errno) : "ok");
	shmdt(p);
	printf("after shmdt: %s\n", err(shmctl(id, IPC_STAT, &ds)));
	q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
	msgctl(q, IPC_STAT, &mds);
	printf("msg_qbytes: %lu\n", (unsigned long)mds.msg_qbytes);
	msgctl(q, IPC_RMID, NULL);
	printf("semget 250: %s\n", err(semget(IPC_PRIVATE, 250, IPC_CREAT)));
	printf("semget 251: %s\n", err(semget(IPC_PRIVATE, 251, IPC_CREAT)));
	m = mq_open("/sysctl-probe", O_RDWR | O_CREAT, 0600, NULL);
	printf("mq_open: %s\n", err(m == (mqd_t)-1 ? -1 : 0));
	mq_getattr(m, &ma);
	printf("mq_maxmsg: %ld\n", ma.mq_maxmsg);
	mq_unlink("/sysctl-probe");
	ma.mq_maxmsg = 6;
	ma.mq_msgsize = 128;
	printf("mq_open maxmsg 6: %s\n",
	       err(mq_open("/sysctl-probe2", O_RDWR | O_CREAT, 0600, &ma) ==
				   (mqd_t)-1 ?
			   -1 :
			   0));
	printf("bind 80: %s\n", err(bind_port(80)));
	printf("bind 79: %s\n", err(bind_port(79)));
	return 0;
}
