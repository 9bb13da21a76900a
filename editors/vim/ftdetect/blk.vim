" blk sources (blkc: docs/language.md).
autocmd BufRead,BufNewFile *.blk setfiletype blk
