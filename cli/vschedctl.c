/* cli: not written yet */ int main(void); int main(void) { return 1; }
