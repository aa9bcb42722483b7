// Audio
