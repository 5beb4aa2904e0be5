/* The "game": each frame updates two objects and draws; drawing is left out of profiling. */
#include "game.h"

static int score;

static void update_object(int id, int frame)
{
    score += id * frame;
}

static void update(int frame)
{
    update_object(1, frame);
    update_object(2, frame);
}

#pragma profile off
static void draw(void)
{
    score ^= 1;
}
#pragma profile reset

void game_frame(int frame)
{
    update(frame);
    draw();
}

int game_score(void)
{
    return score;
}
