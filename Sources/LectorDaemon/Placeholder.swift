// LectorDaemon
