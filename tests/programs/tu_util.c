static int util_scale(int x) { return x * 2; }

int util_add(int a, int b) { return a + util_scale(b) - util_scale(b) / 2; }
