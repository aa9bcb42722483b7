@preconcurrency import Glibc
import LectorWindow

setlocale(LC_ALL, "")
exit(WindowApp.main(CommandLine.arguments))
