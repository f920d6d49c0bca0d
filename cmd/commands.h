/* The subcommands of the tunedeck binary, each in its own cmd/cmd_<name>.c. */
#ifndef TUNEDECK_COMMANDS_H
#define TUNEDECK_COMMANDS_H

typedef struct {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} Command;

/* Defined in cmd/main.c; NULL-terminated. */
extern const Command COMMANDS[];

int cmd_tune(int argc, char **argv);
int cmd_sim_trial(int argc, char **argv);
int cmd_console(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_schedule_live(int argc, char **argv);
int cmd_schedule_or_live(int argc, char **argv); /* schedule, or schedule --live */
int cmd_sessions(int argc, char **argv);
int cmd_hosts(int argc, char **argv);

#endif
