"""The bottom layer (L0; imports nothing of jitgrad): errors with the user's line (`errors`),
value types (`types`), the IR (`ir`: equations, structured loops and branches, kernels, loop
plans), the flags of every operation (`ops`), and the IR's Graphviz drawing (`graphviz`)."""
