/* persistent.c: the code around a kernel's body.
 *
 * Without a producer warpgroup or --persistent, nothing: a return is `ret`.
 * Otherwise every return, and the body's end, branch to one block, the
 * frame's finish, carrying how many fills of the producer's ring the
 * consumers have released (g->ws_fills; warpspec.c):
 *
 *   entry:     [producer split, mbarriers made: warpspec.c]
 *   program:   t = ctaid.x, then t + nctaid.x; fills     (--persistent)
 *              t < the grid's programs, else to done
 *              program ids of t: x = t % gx, y = t / gx % gy, z = t / (gx gy)
 *   body:      ...; return -> finish
 *   finish:    (--persistent: back to program)
 *   done:      tell the producer to stop at fill `fills`; ret
 *
 * --persistent launches fewer programs than the grid has (the runtime: as
 * many as run at once) and each runs the body for many program ids, so a
 * program's shared memory, mbarriers and producer serve them all: the
 * producer's fill numbers run on across program ids (the consumers'
 * releases are numbered by g->ws_fills), and the producer stops once, at
 * the end. The body's ops need nothing else: each op that uses shared
 * memory starts with a barrier, as it would after an earlier op anyway. */
#include "gen.h"

typedef struct BodyFrame {
    LLVMBasicBlockRef finish, head, done;
    LLVMValueRef fills;          /* in finish: g->ws_fills from each return */
    LLVMValueRef program, head_fills; /* --persistent: the program id t (i64) and the fills, in head */
    LLVMValueRef grid[3], ids[3]; /* the grid's sizes (parameters) and t's ids */
    LLVMValueRef tid, lane, warp; /* the entry's, for the code after the loop */
} BodyFrame;

/* A special register of the launch: ctaid or nctaid, along an axis. */
static LLVMValueRef sreg(Gen *g, const char *name, int axis) {
    char intrinsic[48];
    snprintf(intrinsic, sizeof intrinsic, "llvm.nvvm.read.ptx.sreg.%s.%c", name, "xyz"[axis]);
    return nvptx_call0(g, intrinsic, g->m->t.i32);
}

/* The grid's sizes: the kernel's last three parameters. */
static LLVMValueRef grid_param(Gen *g, int axis) {
    unsigned n = LLVMCountParams(g->fn);
    LLVMValueRef p = LLVMGetParam(g->fn, n - 3 + (unsigned)axis);
    char name[16];
    snprintf(name, sizeof name, "grid_%c", "xyz"[axis]);
    LLVMSetValueName2(p, name, strlen(name));
    return p;
}

void nvptx_body_begin(Gen *g) {
    g->ws_fills = ci32(g, 0);
    if (!g->m->opt->persistent && !g->s->ws_loop) return;
    BodyFrame *fr = arena_alloc(&g->arena, sizeof *fr);
    g->frame = fr;
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(g->b);
    fr->finish = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "body.end");
    LLVMPositionBuilderAtEnd(g->b, fr->finish);
    fr->fills = LLVMBuildPhi(g->b, g->m->t.i32, "fills");
    LLVMPositionBuilderAtEnd(g->b, pre);
    if (!g->m->opt->persistent) return;
    fr->head = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "program");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "program.body");
    fr->done = LLVMAppendBasicBlockInContext(g->m->ctx, g->fn, "programs.done");
    LLVMValueRef wide[3];
    for (int a = 0; a < 3; a++) fr->grid[a] = grid_param(g, a), wide[a] = LLVMBuildZExt(g->b, fr->grid[a], g->m->t.i64, "");
    LLVMValueRef plane = LLVMBuildMul(g->b, wide[0], wide[1], ""); /* below 2^64: each size is a u32 */
    LLVMValueRef total = LLVMBuildMul(g->b, plane, wide[2], ""); /* below 2^64: the runtime checks */
    LLVMValueRef first = LLVMBuildZExt(g->b, sreg(g, "ctaid", 0), g->m->t.i64, "");
    LLVMBuildBr(g->b, fr->head);
    LLVMPositionBuilderAtEnd(g->b, fr->head);
    fr->program = LLVMBuildPhi(g->b, g->m->t.i64, "program");
    fr->head_fills = LLVMBuildPhi(g->b, g->m->t.i32, "fills");
    LLVMAddIncoming(fr->program, &first, &pre, 1);
    LLVMAddIncoming(fr->head_fills, &g->ws_fills, &pre, 1);
    LLVMBuildCondBr(g->b, LLVMBuildICmp(g->b, LLVMIntULT, fr->program, total, ""), body, fr->done);
    LLVMPositionBuilderAtEnd(g->b, body);
    LLVMValueRef t = fr->program;
    fr->ids[0] = LLVMBuildTrunc(g->b, LLVMBuildURem(g->b, t, wide[0], ""), g->m->t.i32, "");
    fr->ids[1] = LLVMBuildTrunc(g->b, LLVMBuildURem(g->b, LLVMBuildUDiv(g->b, t, wide[0], ""), wide[1], ""), g->m->t.i32, "");
    fr->ids[2] = LLVMBuildTrunc(g->b, LLVMBuildUDiv(g->b, t, plane, ""), g->m->t.i32, "");
    /* The thread's index read again for each program id, where LLVM cannot
     * hoist it: else it moves all the thread's index arithmetic (the
     * store's addresses after a dot's loop) out of this loop, to be kept
     * through it: matmul 128x256 spilled 160 bytes. */
    fr->tid = g->tid, fr->lane = g->lane, fr->warp = g->warp;
    g->tid = nvptx_asm_call(g, g->m->t.i32, "mov.u32 $0, %tid.x;", "=r", NULL, 0, true);
    g->lane = LLVMBuildAnd(g->b, g->tid, ci32(g, 31), "");
    g->warp = LLVMBuildLShr(g->b, g->tid, ci32(g, 5), "");
    g->ws_fills = fr->head_fills;
}

void nvptx_return(Gen *g) {
    nvptx_bulk_drain(g); /* its staging outlives the bulk reductions' reads */
    if (!g->frame) LLVMBuildRetVoid(g->b);
    else {
        LLVMBasicBlockRef at = LLVMGetInsertBlock(g->b);
        LLVMAddIncoming(g->frame->fills, &g->ws_fills, &at, 1);
        LLVMBuildBr(g->b, g->frame->finish);
    }
    g->terminated = true;
}

void nvptx_body_end(Gen *g) {
    if (!g->terminated) nvptx_return(g);
    BodyFrame *fr = g->frame;
    if (!fr) return;
    LLVMPositionBuilderAtEnd(g->b, fr->finish);
    g->ws_fills = fr->fills;
    if (g->m->opt->persistent) { /* the next program id */
        LLVMValueRef step = LLVMBuildZExt(g->b, sreg(g, "nctaid", 0), g->m->t.i64, "");
        LLVMValueRef next = LLVMBuildAdd(g->b, fr->program, step, "");
        LLVMAddIncoming(fr->program, &next, &fr->finish, 1);
        LLVMAddIncoming(fr->head_fills, &fr->fills, &fr->finish, 1);
        LLVMBuildBr(g->b, fr->head);
        LLVMPositionBuilderAtEnd(g->b, fr->done);
        g->ws_fills = fr->head_fills;
        g->tid = fr->tid, g->lane = fr->lane, g->warp = fr->warp;
    }
    if (g->s->ws_loop) nvptx_ws_end(g, &g->s->ws_ring, g->ws_fills);
    LLVMBuildRetVoid(g->b);
}

LLVMValueRef nvptx_program_id(Gen *g, int axis) {
    return g->m->opt->persistent ? g->frame->ids[axis] : sreg(g, "ctaid", axis);
}

LLVMValueRef nvptx_num_programs(Gen *g, int axis) {
    return g->m->opt->persistent ? g->frame->grid[axis] : sreg(g, "nctaid", axis);
}
