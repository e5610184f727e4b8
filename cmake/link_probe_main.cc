// The entry point of a link probe (cmake/LinkProbe.cmake): the probe is only linked, never run.
int main() { return 0; }
