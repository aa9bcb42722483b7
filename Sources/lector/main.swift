@preconcurrency import Glibc
import LectorDaemon

exit(Command.main(CommandLine.arguments))
