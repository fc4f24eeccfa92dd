CREATE INDEX `file_jobs_status_id` ON `file_jobs` (`status`,`id`);--> statement-breakpoint
CREATE INDEX `file_jobs_user_created` ON `file_jobs` (`user_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `file_jobs_reserved` ON `file_jobs` (`reserved_bytes`) WHERE "file_jobs"."reserved_bytes" > 0;