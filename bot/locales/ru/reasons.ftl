# Сообщения о неудаче задания, по одному на код причины (bot/jobs/reasons.ts), ключ `reason-<code>`.
# Переменные — из ProcessingError.params / параметров движка; список в docs/processors.md.

# Название формата по расширению ($ext).
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
    [txt] текст
   *[other] { $ext }
  }

reason-too_big = { $size ->
    [none] Этот бот скачивает файлы не больше { $limit } МБ, а этот файл больше.
   *[other] Файл весит { $size } МБ — больше лимита загрузки этого бота ({ $limit } МБ).
  }
reason-size_mismatch = Скачанный файл весит { $size }, а Telegram сообщил { $declared }. Пришлите его ещё раз.
reason-file_unavailable = Telegram сейчас не отдаёт этот файл, пришлите его ещё раз.
reason-file_not_readable = Бот не может прочитать этот файл с сервера Bot API. Причина видна оператору в журнале; попробуйте позже.
reason-download_failed = Не удалось скачать файл. Пришлите его ещё раз.
reason-empty = { $what ->
    [pdf] В этом PDF нет ни одной страницы.
   *[other] Файл пустой (0 байт).
  }
reason-not_pdf = { $ext ->
    [docx] Файлы Word не поддерживаются; пришлите PDF.
    [doc] Файлы Word не поддерживаются; пришлите PDF.
    [xlsx] Файлы Excel не поддерживаются; пришлите PDF.
    [pptx] Файлы PowerPoint не поддерживаются; пришлите PDF.
    [txt] Это текстовый файл, а не PDF; пришлите PDF или изображение.
   *[other] Это не PDF (формат: { format-by-ext }); пришлите PDF или изображение.
  }
reason-unsupported_type = { $ext ->
    [heic] HEIC не поддерживается; пришлите JPEG или PNG.
    [svg] Изображения SVG не обрабатываются; пришлите PNG или JPEG.
    [docx] Файлы Word не поддерживаются; пришлите PDF.
    [doc] Файлы Word не поддерживаются; пришлите PDF.
    [zip] Архивы не поддерживаются; пришлите PDF или изображение.
    [bin] Не удалось понять, что это за файл. Пришлите PDF или изображение (JPEG, PNG, WebP, GIF, TIFF, BMP, AVIF).
   *[other] Этот формат ({ format-by-ext }) не поддерживается; пришлите PDF или изображение.
  }
reason-encrypted = Этот PDF защищён паролем; снимите пароль и пришлите файл снова.
reason-truncated = { $size ->
    [none] Файл { format-by-ext } обрезан; пришлите его целиком.
   *[other] Изображение обрезано или повреждено ({ format-by-ext } { $size }); пришлите файл целиком.
  }
reason-corrupt = Файл { format-by-ext } повреждён и не читается; сохраните его заново и пришлите снова.
reason-too_many_pixels = Изображение { NUMBER($width, useGrouping: 0) }×{ NUMBER($height, useGrouping: 0) } ({ $megapixels } Мп); лимит — { $limit } Мп.
reason-too_many_pages = В этом PDF { $pages } { $pages ->
    [one] страница
    [few] страницы
   *[other] страниц
  }; лимит — { $limit }.
reason-pdf_engine_unavailable = Обработка PDF на этом боте сейчас недоступна, оператор уже знает. Изображения обрабатываются.
reason-processing_timeout = { $scope ->
    [page] Страница { $page } обрабатывалась дольше { $seconds } с, и обработка была остановлена. Возможно, эта страница слишком сложная; остальная часть файла не обработана.
   *[whole] Обработка длилась дольше { $seconds } с и была остановлена. Возможно, файл слишком сложный.
}
reason-processing_crashed = Обработка неожиданно прервалась, повторные попытки тоже не удались. Попробуйте ещё раз позже.
reason-too_much_memory = Для обработки этого файла нужно больше памяти, чем разрешено ({ $limit_mb } МБ), поэтому обработка остановлена. Повторная попытка не поможет; попробуйте файл попроще или поменьше.
reason-result_too_big = Результат весит { $size } — больше лимита отправки ({ $limit }). Для PDF разделите или сожмите его кнопками под результатом или пришлите меньше страниц.
reason-delivery_failed = Telegram не принял результат; попробуйте позже.
reason-cancelled = Отменено.
reason-daily_quota = Он пришёл, когда вы уже прислали { $used } МБ за последние сутки, а дневной предел — { $limit } МБ.
reason-attempts_exhausted = Файл не удалось обработать после нескольких попыток.
