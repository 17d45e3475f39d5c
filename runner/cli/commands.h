/* commands.h -- the kneebench subcommands. Each lives in its own cmd_<name>.c (version in
 * main.c), parses its own arguments (argv[0] is the subcommand name) and returns the
 * process exit status. */
#ifndef KB_COMMANDS_H
#define KB_COMMANDS_H

int cmd_load(int argc, char **argv);
int cmd_knee(int argc, char **argv);
int cmd_curve(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_soak(int argc, char **argv);
int cmd_qualify(int argc, char **argv);
int cmd_version(int argc, char **argv);

#endif
