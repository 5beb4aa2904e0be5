/* A program for the seed's hook.c (its first set of hooks: record until the buffer is full):
 * starts recording, calls two hooked functions and the task switch hook, prints the records'
 * types (the low two bits of address_type: 0 entry, 1 exit, 2 task entry, 3 task exit), and
 * saves the records in use to seed.bin, as a debugger would dump the buffer. */
#include <stdio.h>

typedef struct { unsigned int address_type, TSCL, TSCH; } Hook_Record;
extern Hook_Record ProfileData[];
extern unsigned int uiProfileDataCnt;
void hook_init(void);
void task_switch_hook(unsigned int prevTask, unsigned int nextTask);

static int leaf(int x) { return x + 1; }
int work(int x) { return leaf(x) * 2; }

int main(void) {
    hook_init(); /* main's own entry came before: not recorded */
    int r = work(1);
    task_switch_hook(0x100, 0x200);
    unsigned int n = uiProfileDataCnt;
    printf("%u records, r=%d:", n, r);
    for (unsigned int i = 0; i < n; i++)
        printf(" %u", ProfileData[i].address_type & 3);
    printf("\n");
    FILE *dump = fopen("seed.bin", "wb");
    if (dump == NULL || fwrite(ProfileData, sizeof ProfileData[0], n, dump) != n || fclose(dump))
        return 1;
    return 0;
}
