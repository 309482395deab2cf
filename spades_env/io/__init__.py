"""Input and output above the rules: game records (export, load, validate, replay), pictures
(ANSI text, RGB arrays), video, and the checks of output paths."""
