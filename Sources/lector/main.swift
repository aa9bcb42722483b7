@preconcurrency import Glibc
import LectorClient

setlocale(LC_ALL, "") // GLib's messages and help text in the user's language and charset
exit(Command.main(CommandLine.arguments))
