// SpeechCore
