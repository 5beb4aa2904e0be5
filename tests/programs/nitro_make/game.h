#ifndef GAME_H
#define GAME_H

void game_frame(int frame);
int game_score(void);

#endif
