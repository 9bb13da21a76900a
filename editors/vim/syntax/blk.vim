" Vim syntax file for blk, the block language of blkc (docs/language.md).
" The syn keyword groups follow the compiler's tables: blkKw* the lexer's
" keywords (compiler/lexer.re), blkType the types (compiler/dtypes.def and
" bool), blkBuiltin the builtins (compiler/builtins.def and ops.def's MATH_OP
" rows), blkCtx* words special only where they stand.
" scripts/check-editor-grammars.py checks these lists against those tables.

if exists('b:current_syntax')
  finish
endif

syn case match

" The lexer's keyword table.
syn keyword blkKwDefine      kernel fn
syn keyword blkKwDeclare     let var
syn keyword blkKwStorage     const
syn keyword blkKwType        type
syn keyword blkKwConditional if else
syn keyword blkKwRepeat      for in while
syn keyword blkKwStatement   return
syn keyword blkKwOperator    as
syn keyword blkKwBoolean     true false
syn keyword blkKwNone        None

syn keyword blkType i1 i8 i16 i32 i64 u8 u16 u32 u64 f8e4m3 f8e5m2 f16 bf16 f32 f64 bool

" Builtins are contained in blkCall so that they show only when called: a
" binding may take a builtin's name (let exp = ...).
syn keyword blkBuiltin contained program_id num_programs arange zeros full load store
syn keyword blkBuiltin contained sum max min argmax argmin cumsum cumprod reduce associative_scan
syn keyword blkBuiltin contained sort where abs minimum maximum fma cdiv clamp umulhi pow
syn keyword blkBuiltin contained atomic_cas atomic_xchg atomic_add atomic_max atomic_min
syn keyword blkBuiltin contained atomic_and atomic_or atomic_xor
syn keyword blkBuiltin contained dot trans permute flip reshape join split cat interleave shape
syn keyword blkBuiltin contained expand_dims broadcast_to
syn keyword blkBuiltin contained rand randint randn rand4x randint4x randn4x
syn keyword blkBuiltin contained debug_barrier globaltimer clock smid static_assert device_print
syn keyword blkBuiltin contained device_assert assume gather histogram topk inline_asm_elementwise
syn keyword blkBuiltin contained gdc_wait gdc_launch_dependents
syn keyword blkBuiltin contained exp exp2 log log2 sqrt rsqrt floor ceil trunc rint round
syn keyword blkBuiltin contained tanh sigmoid erf expm1 log1p sin cos

" Identifiers to the lexer, special where they stand: range and static_range after `for i in`,
" str as a const parameter's type, inf and nan unless a binding shadows them.
syn keyword blkCtxBuiltin contained range static_range
syn keyword blkCtxType    str
syn keyword blkCtxConstant inf nan

syn match blkCall "\<\h\w*\ze\s*(" contains=blkBuiltin,blkCtxBuiltin
" After blkCall, so that it wins at the name of `kernel add(`.
syn match blkFunction "\%(\<\%(kernel\|fn\)\s\+\)\@<=\h\w*"

" @align(16), @multiple_of(16), @equal(1).
syn match blkAnnotation "@\s*\h\w*"

" Numbers: where several match at one place the last defined wins, so the
" errors come before the forms that are valid.
syn match blkNumber      "\<\d\+\>"
" Digits running into letters, such as 1f or 0x1g, are one bad token.
syn match blkNumberError "\<\d\+\h\w*"
" blk has no octal: 010 is an error.
syn match blkNumberError "\<0\d\+\>"
syn match blkNumber      "\<0[xX]\x\+\>"
syn match blkFloat       "\<\d\+[eE]\%([+-]\d\+\|\d\+\>\)"
syn match blkFloat       "\<\d\+\.\d*\%([eE][+-]\=\d\+\)\="
" .5 is an error in blk (write 0.5).
syn match blkNumberError "\%(\<\d\+\)\@<!\.\d\+\%([eE][+-]\=\d\+\)\="

" One line only: the lexer ends an unterminated string at the newline.
syn region blkString start=+"+ skip=+\\\\\|\\"+ end=+"+ end=+$+ oneline contains=blkEscape,blkEscapeError
syn match blkEscapeError +\\.+ contained
syn match blkEscape      +\\[nt"\\]+ contained

syn match  blkTodo "\<\%(TODO\|FIXME\|XXX\)\>" contained
" A // comment also after an operand: blk has no // operator.
syn match  blkComment "//.*$" contains=blkTodo,@Spell
" Not nested: the first */ ends it.
syn region blkComment start="/\*" end="\*/" contains=blkTodo,@Spell

hi def link blkKwDefine      Keyword
hi def link blkKwDeclare     Keyword
hi def link blkKwStorage     StorageClass
hi def link blkKwType        Type
hi def link blkKwConditional Conditional
hi def link blkKwRepeat      Repeat
hi def link blkKwStatement   Statement
hi def link blkKwOperator    Operator
hi def link blkKwBoolean     Boolean
hi def link blkKwNone        Constant
hi def link blkType          Type
hi def link blkBuiltin       Function
hi def link blkCtxBuiltin    Function
hi def link blkCtxType       Type
hi def link blkCtxConstant   Constant
hi def link blkFunction      Function
hi def link blkAnnotation    PreProc
hi def link blkNumber        Number
hi def link blkFloat         Float
hi def link blkNumberError   Error
hi def link blkString        String
hi def link blkEscape        SpecialChar
hi def link blkEscapeError   Error
hi def link blkTodo          Todo
hi def link blkComment       Comment

let b:current_syntax = 'blk'
