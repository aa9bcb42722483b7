/* bench/peak-rss CMD [ARG...]: runs CMD with this process's standard streams and prints its peak resident set
 * (wait4's ru_maxrss, kB) on standard error as "peak-rss KB"; exits with CMD's status. A small C parent keeps
 * the figure the command's own: Linux carries ru_maxrss across execve, so a child forked from a large process
 * (Python) would report at least its parent's size. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: peak-rss CMD [ARG...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) { perror("peak-rss: fork"); return 1; }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror("peak-rss: exec");
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) { perror("peak-rss: wait4"); return 1; }
    fprintf(stderr, "peak-rss %ld\n", usage.ru_maxrss);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
