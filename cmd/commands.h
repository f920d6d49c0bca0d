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

#endif
