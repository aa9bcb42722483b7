// Synthesis
