// GLibKit
