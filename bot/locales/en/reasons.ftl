# Chat messages for failed jobs, one per reason code (bot/jobs/reasons.ts), key `reason-<code>`.
# Variables come from ProcessingError.params / the engine's params; docs/processors.md lists them.
# Helper messages below share the caller's variables (Fluent message references keep the arguments).

# Format name by canonical extension ($ext).
format-by-ext = { $ext ->
    [pdf] PDF
    [jpg] JPEG
    [png] PNG
    [gif] GIF
    [webp] WebP
    [tif] TIFF
    [avif] AVIF
    [bmp] BMP
    [heic] HEIC
    [svg] SVG
    [docx] Word
    [txt] text
   *[other] { $ext }
  }

reason-too_big = { $size ->
    [none] This bot downloads files of up to { $limit } MB, and this one is larger.
   *[other] The file is { $size } MB, over this bot’s { $limit } MB download limit.
  }
reason-size_mismatch = The downloaded file is { $size }, not the { $declared } Telegram announced. Please send it again.
reason-file_unavailable = Telegram can’t give this file now, please send it again.
reason-file_not_readable = The bot can’t read this file from its Bot API server. The operator can see why in the log; please try again later.
reason-download_failed = The file could not be downloaded. Please send it again.
reason-empty = { $what ->
    [pdf] This PDF has no pages.
   *[other] The file is empty (0 bytes).
  }
reason-not_pdf = { $ext ->
    [docx] Word files aren’t supported; send a PDF.
    [doc] Word files aren’t supported; send a PDF.
    [xlsx] Excel files aren’t supported; send a PDF.
    [pptx] PowerPoint files aren’t supported; send a PDF.
    [txt] This is a text file, not a PDF; send a PDF or an image.
   *[other] This isn’t a PDF (it is { $label }); send a PDF or an image.
  }
reason-unsupported_type = { $ext ->
    [heic] HEIC isn’t supported; send JPEG or PNG.
    [svg] SVG images aren’t processed; send PNG or JPEG.
    [docx] Word files aren’t supported; send a PDF.
    [doc] Word files aren’t supported; send a PDF.
    [zip] Archives aren’t supported; send a PDF or an image.
    [bin] I can’t tell what this file is. Send a PDF or an image (JPEG, PNG, WebP, GIF, TIFF, BMP, AVIF).
   *[other] This file ({ $label }) isn’t supported; send a PDF or an image.
  }
reason-encrypted = This PDF is password-protected; remove the password and send it again.
reason-truncated = { $size ->
    [none] The { format-by-ext } file is cut off; send the complete file.
   *[other] The image is cut off or damaged ({ format-by-ext } { $size }); send the complete file.
  }
reason-corrupt = The { format-by-ext } file is damaged and can’t be read; export it again and resend.
reason-too_many_pixels = The image is { NUMBER($width, useGrouping: 0) }×{ NUMBER($height, useGrouping: 0) } ({ $megapixels } MP); the limit is { $limit } MP.
reason-too_many_pages = This PDF has { $pages } pages; the limit is { $limit }.
reason-pdf_engine_unavailable = PDF processing is unavailable on this bot right now; the operator has been told. Images still work.
reason-processing_timeout = { $scope ->
    [page] Page { $page } took longer than { $seconds } s to process and was stopped. That page may be too complex; the rest of the file was not processed.
   *[whole] Processing took longer than { $seconds } s and was stopped. The file may be too complex.
}
reason-processing_crashed = Processing stopped unexpectedly, and the retries failed too. Please try again later.
reason-too_much_memory = Processing this file needs more memory than the { $limit_mb } MB limit, so it was stopped. Trying again would not help; a simpler or smaller file may work.
reason-result_too_big = The result is { $size }, over the { $limit } upload limit. For a PDF, split or compress it with the buttons under its result, or send fewer pages.
reason-delivery_failed = Telegram refused the result; please try again later.
reason-cancelled = Cancelled.
reason-daily_quota = It came after you had sent { $used } MB in the last 24 hours, and the daily limit is { $limit } MB.
reason-attempts_exhausted = The file could not be processed after several attempts.
