// sd_lector: Speech Dispatcher's output module for Lector (speech-dispatcher starts it with the path of its
// configuration file, lector.conf, which it does not need).
@preconcurrency import Glibc
import SpeechdModule

exit(ModuleDriver().run())
