@preconcurrency import Glibc
import LectorClient
import LectorDaemon

// The whole command line of `lector`, with the daemon, the worker, `voices` and `read --output` run here.
setlocale(LC_ALL, "") // GLib's messages and help text in the user's language and charset
exit(Command.main(CommandLine.arguments, local: DaemonCommands()))
