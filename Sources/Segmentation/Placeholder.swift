// Segmentation
