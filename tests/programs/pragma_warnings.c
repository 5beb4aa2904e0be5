/* Malformed and misplaced pragmas: each gets a warning with its location. */
#pragma NO_HOOKS missing_parens
#pragma NO_HOOKS(too, many)
#pragma profile sideways

int defined_first(void) { return 0; }
#pragma NO_HOOKS(defined_first)

#pragma NO_HOOKS(nowhere)

int main(void) { return defined_first(); }
#pragma CODE_SECTION(main ".text:x")
#pragma DATA_SECTION(".far:nothing_follows")
